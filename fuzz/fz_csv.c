/* fz_csv.c: CSV tables such as a sweep.csv (csv_load, base/csv.h): every
 * column of a table that loads is found by its name (the first of that
 * name) and every field read back. */
#include "fz.h"

#include "csv.h"

static int fz_csv(const uint8_t *data, size_t size)
{
	struct csv c;
	struct err e;

	if (csv_load(&c, fz_put("sweep.csv", data, size), &e) < 0)
		return -1;
	for (size_t j = 0; j < c.ncol; j++) {
		int col = csv_col(&c, c.cell[j], &e);

		HS_ASSERT(col >= 0 && (size_t)col <= j);
		for (size_t r = 0; r < c.nrow; r++)
			HS_ASSERT(strlen(csv_str(&c, r, col)) <= size);
	}
	csv_release(&c);
	return 0;
}

FZ_TARGET(fz_csv)
