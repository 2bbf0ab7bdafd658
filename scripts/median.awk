# median.awk: median(list), the median of the numbers in a space-separated
# string (the mean of the middle two for an even count), for the bench
# scripts' tables (awk -f scripts/median.awk -f TABLE.awk).
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j] + 0 < a[j - 1] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
