/* csv.h: reading a CSV table whole (a sweep.csv): a header line of column
 * names, then rows of as many fields. A field may be quoted ("a,b", with
 * "" for a quote inside); lines end in \n or \r\n. */
#ifndef HS_CSV_H
#define HS_CSV_H

#include <stddef.h>

struct err;

struct csv {
	char **cell;  /* (n_cells = ncol x (nrow + 1)) owned: row 0 is the
			 header */
	size_t ncol, nrow, n_cells;
	char *file;   /* owned: the path, for messages */
};

/* 0, or -1 with e's message: the file cannot be read, a row has another
 * number of fields than the header ("FILE:LINE: ..."). */
int csv_load(struct csv *c, const char *path, struct err *e);
void csv_release(struct csv *c);

/* The column named name, or -1 with e's message naming the file. */
int csv_col(const struct csv *c, const char *name, struct err *e);
/* csv_load, then the column of each of names (NULL-terminated) into col;
 * on error nothing stays loaded. */
int csv_load_cols(struct csv *c, const char *path, const char *const *names,
		  int *col, struct err *e);
/* Row r's (0 .. nrow - 1) field in column col, as text and as a number
 * (strtod; 0 where it is no number). Borrowed. */
const char *csv_str(const struct csv *c, size_t r, int col);
double csv_num(const struct csv *c, size_t r, int col);
/* Row r's field in column col into *x where it is a finite number, all
 * of it: 0; else (an empty field, "abc", "nan") -1 with e's message
 * naming the file, the line and the column. A reader that must have
 * numbers asks this: csv_num reads those as 0. */
int csv_number(const struct csv *c, size_t r, int col, double *x,
	       struct err *e);

#endif
