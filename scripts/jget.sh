#!/bin/sh
# jget.sh FILE POINTER: prints the scalar at POINTER (/all/itl_s/mean) of a
# JSON file, or nothing when the file or the value is not there.
lib=$(dirname "$0")
if [ -f "$1" ]; then
	awk -f "$lib/jflat.awk" "$1" |
		awk -F'\t' -v p="$2" '$1 == p { print $2; exit }'
fi
