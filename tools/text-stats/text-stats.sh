#!/bin/sh
# text-stats: line, word, character and byte counts and the sha256 of a text.
# Arguments on stdin ({"text": "..."}), the result on stdout, progress on fd 3
# (the bwrap runtime's contract; see runtimes/bwrap/doc.go).
set -eu
export LC_ALL=C
text=$(mktemp)
trap 'rm -f "$text"' EXIT
awk -f /bundle/decode.awk > "$text"
echo '{"fraction": 0.5, "message": "decoded the text"}' >&3 2>/dev/null || true
bytes=$(wc -c < "$text")
words=$(wc -w < "$text")
lines=$(wc -l < "$text")
chars=$(LC_ALL=C.UTF-8 wc -m < "$text")
sha=$(sha256sum < "$text" | cut -d ' ' -f 1)
# A last line without a newline still counts as a line.
if [ "$bytes" -gt 0 ] && [ -n "$(tail -c 1 "$text")" ]; then
	lines=$((lines + 1))
fi
printf '{"lines": %d, "words": %d, "chars": %d, "bytes": %d, "sha256": "%s"}\n' "$lines" "$words" "$chars" "$bytes" "$sha"
