# csv.awk: the head of an awk program over a sweep.csv (docs/sweep.md; no
# field there needs quoting), run with -F,:
#
#   awk -F, "$(cat scripts/csv.awk) PROGRAM" sweep.csv
#
# Line 1 names the columns and is consumed here; c(name) is the current
# row's field in that column (a missing column stops the program, exit 2).
function c(name) {
	if (!(name in col_of)) {
		printf "%s: no column \"%s\"\n", FILENAME, name > "/dev/stderr"
		exit 2
	}
	return $col_of[name]
}
FNR == 1 {
	for (i = 1; i <= NF; i++)
		col_of[$i] = i
	next
}
