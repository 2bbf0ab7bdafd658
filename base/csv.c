/* csv.c: the table is read into one array of strings, the header first,
 * row after row; each field is its own allocation. */
#include "csv.h"

#include "err.h"
#include "fs.h"
#include "mem.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* a field being read: n characters of out, cap allocated */
struct buf {
	char *out;
	size_t n, cap;
};

static void append(struct buf *b, char c)
{
	if (b->n + 2 > b->cap)
		b->out = xrealloc(b->out, b->cap = b->cap ? 2 * b->cap : 16);
	b->out[b->n++] = c;
}

/* Reads one field from *p (advanced past it and its comma); *end_of_line
 * is set when the field ended its line (or the text). */
static char *field(const char **p, int *end_of_line)
{
	const char *s = *p;
	struct buf b = { NULL, 0, 0 };

	if (*s == '"') {
		for (s++; *s; s++) {
			if (*s == '"' && s[1] == '"')
				s++;
			else if (*s == '"') {
				s++;
				break;
			}
			append(&b, *s);
		}
	}
	for (; *s && *s != ',' && *s != '\n' && *s != '\r'; s++)
		append(&b, *s);
	append(&b, '\0');
	*end_of_line = *s != ',';
	if (*s == ',')
		s++;
	else if (*s == '\r' && s[1] == '\n')
		s += 2;
	else if (*s)
		s++;
	*p = s;
	return b.out;
}

int csv_load(struct csv *c, const char *path, struct err *e)
{
	char *text = fs_slurp(path, NULL);
	const char *p = text;
	size_t cap = 0, line = 1, in_row = 0;

	*c = (struct csv){ .file = xstrdup(path) };
	if (!text) {
		err_set(e, "%s: cannot read: %s", path, strerror(errno));
		csv_release(c);
		return -1;
	}
	if (!strncmp(p, FS_BOM, 3))
		p += 3;
	while (*p) {
		int eol;
		char *f = field(&p, &eol);

		if (c->n_cells == cap)
			c->cell = xrealloc(c->cell, (cap = cap ? 2 * cap : 64) *
					   sizeof(*c->cell));
		c->cell[c->n_cells++] = f;
		in_row++;
		if (!eol)
			continue;
		if (line == 1)
			c->ncol = in_row;
		else if (in_row != c->ncol) {
			err_set(e, "%s:%zu: %zu fields, the header has %zu", path,
				line, in_row, c->ncol);
			free(text);
			csv_release(c);
			return -1;
		}
		in_row = 0;
		line++;
	}
	free(text);
	if (c->ncol == 0) {
		err_set(e, "%s: no header line", path);
		csv_release(c);
		return -1;
	}
	if (in_row) { /* a last line without its newline */
		err_set(e, "%s:%zu: %zu fields, the header has %zu", path, line,
			in_row, c->ncol);
		csv_release(c);
		return -1;
	}
	c->nrow = c->n_cells / c->ncol - 1;
	return 0;
}

void csv_release(struct csv *c)
{
	for (size_t i = 0; i < c->n_cells; i++)
		free(c->cell[i]);
	free(c->cell);
	free(c->file);
	*c = (struct csv){ 0 };
}

int csv_col(const struct csv *c, const char *name, struct err *e)
{
	for (size_t j = 0; j < c->ncol; j++)
		if (!strcmp(c->cell[j], name))
			return (int)j;
	return err_set(e, "%s: no column \"%s\"", c->file, name);
}

int csv_load_cols(struct csv *c, const char *path,
		  const char *const *names, int *col, struct err *e)
{
	if (csv_load(c, path, e) < 0)
		return -1;
	for (int i = 0; names[i]; i++)
		if ((col[i] = csv_col(c, names[i], e)) < 0) {
			csv_release(c);
			return -1;
		}
	return 0;
}

const char *csv_str(const struct csv *c, size_t r, int col)
{
	return c->cell[(r + 1) * c->ncol + (size_t)col];
}

double csv_num(const struct csv *c, size_t r, int col)
{
	return strtod(csv_str(c, r, col), NULL);
}

int csv_number(const struct csv *c, size_t r, int col, double *x,
	       struct err *e)
{
	const char *s = csv_str(c, r, col);
	char *end;

	*x = strtod(s, &end);
	if (end != s && !*end && isfinite(*x))
		return 0;
	return err_set(e, "%s:%zu: %s: expected a number, got \"%.40s\"",
		       c->file, r + 2, c->cell[col], s);
}
