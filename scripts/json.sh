# json.sh: JSON for the scripts, read with jq (sourced by report.sh and
# plots.sh; the binary reads JSON itself).

# jflat FILE: a line per scalar, "POINTER<TAB>VALUE" (/all/itl_s/mean,
# /roofline/3/tokens), strings without their quotes
jflat() {
	jq -r 'paths(type != "object" and type != "array") as $p
		| "/" + ($p | map(tostring) | join("/")) + "\t" +
		  (getpath($p) | tostring)' "$1"
}

# jget FILE POINTER: the scalar at POINTER, or nothing when the file or the
# value is not there
jget() {
	if [ -f "$1" ]; then
		jflat "$1" | awk -F'\t' -v p="$2" '$1 == p { print $2; exit }'
	fi
}
