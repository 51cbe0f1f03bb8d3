#!/usr/bin/env python3
"""links.py [ROOT]: checks every relative link of the Markdown files under
ROOT that git tracks or would track (not ignored): the file or folder it names exists, and a #anchor into a
Markdown file names one of its headings (GitHub's slugs). Links to a
scheme (https:, mailto:) are not followed. Prints each broken link as
FILE:LINE: TARGET: why, and exits 1 when there is any; prints the count of
files and links checked otherwise."""
import os
import re
import subprocess
import sys

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def prose_lines(path, blank_code=True):
    """(line number, text) of each line outside fenced code, code spans
    blanked (kept for headings: GitHub's slug keeps a code span's text)."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                yield number, (CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
                               if blank_code else line)


def slug(heading):
    """GitHub's anchor of a heading: lower case, inline markup and
    punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        for _, line in prose_lines(path, blank_code=False):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def external(target):
    return re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) is not None


def check_link(root, source, target):
    """Why the relative link is broken, or None."""
    path, _, anchor = target.partition("#")
    if path:
        resolved = os.path.normpath(os.path.join(os.path.dirname(source), path))
    else:
        resolved = source
    full = os.path.join(root, resolved)
    if not os.path.exists(full):
        return f"no {resolved}"
    if anchor and resolved.endswith(".md") and anchor not in anchors(full):
        return f"no heading #{anchor} in {resolved}"
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others",
                            "--exclude-standard", "*.md"], check=True,
                           capture_output=True, text=True).stdout.split()
    problems, links = [], 0
    for source in files:
        for number, line in prose_lines(os.path.join(root, source)):
            targets = LINK.findall(line)
            m = REFERENCE.match(line)
            if m:
                targets.append(m.group(1))
            for target in (t for t in targets if not external(t)):
                links += 1
                why = check_link(root, source, target)
                if why:
                    problems.append(f"{source}:{number}: {target}: {why}")
    for p in problems:
        print(p)
    if problems:
        print(f"links: {len(problems)} broken of {links} relative links")
        return 1
    print(f"links: {links} relative links in {len(files)} Markdown files, all valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
