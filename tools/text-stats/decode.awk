# decode.awk: print the decoded value of the "text" member of the JSON object
# on stdin, as raw bytes, with nothing added. The dispatcher has validated the
# object against tool.json's input_schema (one member, "text", a string), so
# this only has to find that string and undo JSON's escapes: \" \\ \/ \b \f
# \n \r \t and \uXXXX (surrogate pairs included), written as UTF-8. Run with
# LC_ALL=C so that awk's strings are bytes and UTF-8 passes through.
BEGIN { RS = "\001" }
{ doc = doc $0 }
END {
	i = index(doc, "\"text\"")
	if (i == 0) { print "text-stats: no \"text\" member in the arguments" > "/dev/stderr"; exit 2 }
	s = substr(doc, i + 6)
	sub(/^[ \t\r\n]*:[ \t\r\n]*"/, "", s)
	n = length(s)
	for (j = 1; j <= n; j++) {
		c = substr(s, j, 1)
		if (c == "\"") exit 0
		if (c != "\\") { printf "%s", c; continue }
		j++
		e = substr(s, j, 1)
		if (e == "n") printf "\n"
		else if (e == "t") printf "\t"
		else if (e == "r") printf "\r"
		else if (e == "b") printf "\b"
		else if (e == "f") printf "\f"
		else if (e == "u") {
			cp = hex(substr(s, j + 1, 4)); j += 4
			if (cp >= 55296 && cp < 56320 && substr(s, j + 1, 2) == "\\u") {
				lo = hex(substr(s, j + 3, 4)); j += 6
				cp = 65536 + (cp - 55296) * 1024 + (lo - 56320)
			}
			utf8(cp)
		} else printf "%s", e
	}
	print "text-stats: the \"text\" string is not terminated" > "/dev/stderr"
	exit 2
}
function hex(h,   k, v, d) {
	v = 0
	for (k = 1; k <= 4; k++) {
		d = index("0123456789abcdef", tolower(substr(h, k, 1))) - 1
		v = v * 16 + d
	}
	return v
}
function utf8(cp) {
	if (cp < 128) printf "%c", cp
	else if (cp < 2048) printf "%c%c", 192 + int(cp / 64), 128 + cp % 64
	else if (cp < 65536) printf "%c%c%c", 224 + int(cp / 4096), 128 + int(cp / 64) % 64, 128 + cp % 64
	else printf "%c%c%c%c", 240 + int(cp / 262144), 128 + int(cp / 4096) % 64, 128 + int(cp / 64) % 64, 128 + cp % 64
}
