/* workload.c: reads arrival traces, checking every field of every row. */
#include "workload.h"
#include "mem.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int field(const char *path, int line, const char *name, char **p,
		 double lo, double *out, struct err *e)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(*p, &end);
	if (end == *p || errno || !(v >= lo) || !isfinite(v))
		return err_set(e, "%s:%d: %s: expected a number >= %g, got "
			       "\"%.*s\"", path, line, name, lo,
			       (int)strcspn(*p, ",\n"), *p);
	*out = v;
	while (*end == ' ' || *end == '\t')
		end++;
	*p = *end == ',' ? end + 1 : end;
	return 0;
}

int wl_trace_load(struct wl_trace *t, const char *path, struct err *e)
{
	FILE *f = fopen(path, "r");
	char buf[512];
	size_t cap = 0;
	int line = 0;

	*t = (struct wl_trace){ 0 };
	if (!f)
		return err_set(e, "%s: cannot read arrival trace: %s", path,
			       strerror(errno));
	while (fgets(buf, sizeof(buf), f)) {
		char *p = buf;
		double a, pr, out;

		line++;
		buf[strcspn(buf, "#\r\n")] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || (line == 1 && !strncmp(p, "arrival_s", 9)))
			continue;
		if (field(path, line, "arrival_s", &p, 0, &a, e) < 0 ||
		    field(path, line, "prompt_tokens", &p, 1, &pr, e) < 0 ||
		    field(path, line, "output_tokens", &p, 1, &out, e) < 0)
			goto fail;
		if (pr != floor(pr) || out != floor(out) || pr > 1e7 || out > 1e7) {
			err_set(e, "%s:%d: token counts must be whole numbers "
				"below 1e7", path, line);
			goto fail;
		}
		if (t->n == cap) {
			cap = cap ? 2 * cap : 256;
			t->rows = xrealloc(t->rows, cap * sizeof(*t->rows));
		}
		t->rows[t->n++] = (struct wl_row){ a, (int32_t)pr, (int32_t)out };
	}
	fclose(f);
	if (t->n == 0)
		return err_set(e, "%s: the arrival trace has no rows", path);
	return 0;
fail:
	fclose(f);
	wl_trace_release(t);
	return -1;
}

void wl_trace_release(struct wl_trace *t)
{
	free(t->rows);
	*t = (struct wl_trace){ 0 };
}
