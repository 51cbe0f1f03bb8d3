/* pause.c: the sandbox ("pause") container of every pod of the single-node
 * Kubernetes of scripts/k8s. It holds the pod's namespaces open and waits
 * until it is told to stop, as Kubernetes' own pause image does; there is
 * no registry here to pull that one from, so up.sh builds this one
 * statically and imports it as an image. It reaps the zombies of the pod's
 * shared PID namespace when it is PID 1 there. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig)
{
    (void)sig;
    _exit(0);
}

static void reap(int sig)
{
    (void)sig;
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

int main(void)
{
    struct sigaction stop_action = {.sa_handler = stop};
    struct sigaction reap_action = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
    sigaction(SIGINT, &stop_action, NULL);
    sigaction(SIGTERM, &stop_action, NULL);
    sigaction(SIGCHLD, &reap_action, NULL);
    for (;;)
        pause();
    return EXIT_FAILURE;
}
