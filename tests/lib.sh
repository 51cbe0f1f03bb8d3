# lib.sh: shell helpers shared by the command-line and end-to-end tests.
# Source it: . "$(dirname "$0")/lib.sh"

# Prints a TCP port for a coordinator to bind on 127.0.0.1: random, below the
# kernel's ephemeral range (32768 and up here, where the JVMs' and clients'
# own sockets land, so a port picked there can be taken before the bind) and
# above the runtime pairs' ports (21000 + 20 * index, index below 200), and not
# listening now.
free_port() {
    local port
    for _ in $(seq 1 50); do
        port=$((25000 + RANDOM % 7700))
        if ! ss -Htln "sport = :$port" 2> /dev/null | grep -q .; then
            echo "$port"
            return 0
        fi
    done
    echo "free_port: no free port found in 25000-32699" >&2
    return 1
}
