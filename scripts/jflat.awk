# jflat.awk: JSON in, one line per scalar out: "POINTER<TAB>VALUE", the
# pointer in the form of RFC 6901 (/all/itl_s/mean, /roofline/3/tokens; a
# "/" or "~" inside a key is not escaped), strings without their quotes
# (escapes left as they are).
#
#   awk -f scripts/jflat.awk summary.json | awk -F'\t' '$1 == "/all/alpha"'
#
# State: a stack of open containers; at depth d, kind[d] is "{" or "[",
# key[d] the current member name or element index. A token never spans
# lines in JSON, so the input is tokenised line by line.
function path(   p, i) {
	p = ""
	for (i = 1; i <= depth; i++)
		p = p "/" key[i]
	return p
}
function scalar(v) {
	if (depth > 0 && kind[depth] == "{" && !have_key) {
		# a member name: "name" :
		key[depth] = v
		have_key = 1
		return
	}
	printf "%s\t%s\n", path(), v
	have_key = 0
}
{
	line = $0
	while (line != "") {
		if (match(line, /^[ \t\r]+/)) {
			line = substr(line, RLENGTH + 1)
			continue
		}
		c = substr(line, 1, 1)
		if (c == "{" || c == "[") {
			depth++
			kind[depth] = c
			key[depth] = c == "[" ? 0 : ""
			have_key = 0
			line = substr(line, 2)
		} else if (c == "}" || c == "]") {
			depth--
			have_key = 0
			line = substr(line, 2)
		} else if (c == ":") {
			line = substr(line, 2)
		} else if (c == ",") {
			if (kind[depth] == "[")
				key[depth]++
			have_key = 0
			line = substr(line, 2)
		} else if (c == "\"") {
			match(line, /^"([^"\\]|\\.)*"/)
			scalar(substr(line, 2, RLENGTH - 2))
			line = substr(line, RLENGTH + 1)
		} else {
			# a number, true, false or null
			match(line, /^[^ \t\r,:}\]]+/)
			scalar(substr(line, 1, RLENGTH))
			line = substr(line, RLENGTH + 1)
		}
	}
}
