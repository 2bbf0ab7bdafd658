/* plot.c: a run's CDFs or a sweep's lines, as data blocks and one gnuplot
 * script (plot.h).
 *
 * Each figure is a data file of blocks (gnuplot's "index": a title line,
 * then rows) and a stanza of plot.gp that draws it to NAME.png and
 * NAME.svg; all of it goes to a temporary folder that replaces the
 * figures' folder whole once gnuplot has run (base/outdir.h). A run's
 * blocks: one a group (one a group and percentile for ITL), its values
 * sorted with their cumulative share. A sweep's: one a series (the values
 * of every parameter but x), its rows sorted by x: x, mean, ci95. */
#include "plot.h"

#include "csv.h"
#include "fs.h"
#include "jx.h"
#include "mem.h"
#include "order.h"
#include "outdir.h"
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define GP_NAME "plot.gp"

/* What every figure of plot.gp shares: PNG (cairo where there is one) and
 * SVG of the same plot, colour-blind-safe colours. */
static const char gp_head[] =
	"# plot.gp: hybridspec plot's figures; gnuplot plot.gp (in this folder)\n"
	"# draws them again from the .dat files beside it\n"
	"size = 'size 900,560'\n"
	"pngterm = strstrt(GPVAL_TERMINALS, 'pngcairo') ? 'pngcairo noenhanced '"
	".size.\" font 'Sans,11' linewidth 1.5\" : 'png noenhanced '.size\n"
	"set linetype 1 linecolor rgb '#0072b2' pointtype 7\n"
	"set linetype 2 linecolor rgb '#d55e00' pointtype 5\n"
	"set linetype 3 linecolor rgb '#009e73' pointtype 9\n"
	"set linetype 4 linecolor rgb '#cc79a7' pointtype 11\n"
	"set linetype 5 linecolor rgb '#e69f00' pointtype 13\n"
	"set linetype 6 linecolor rgb '#56b4e9' pointtype 3\n"
	"set linetype cycle 6\n"
	"common = \"set grid linecolor rgb '#d0d0d0'; set key box opaque "
	"samplen 2 spacing 1.2; set datafile missing 'nan'\"\n";

bool plot_gnuplot(const char *dir, const char *script)
{
	int st = -1;
	pid_t pid;

	fflush(NULL);
	if ((pid = fork()) == 0) {
		if (chdir(dir) == 0) {
			if (!freopen("/dev/null", "w", stdout) ||
			    !freopen("/dev/null", "w", stderr))
				_exit(127);
			execlp("gnuplot", "gnuplot", script, (char *)NULL);
		}
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
	return pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

const char *plot_quoted(const char *s, char *buf, size_t cap)
{
	size_t i = 0;

	for (; s[i] && i + 1 < cap; i++)
		buf[i] = s[i] == '\'' || s[i] == '"' ? '`' : s[i];
	buf[i] = '\0';
	return buf;
}

/* The figure name's stanza: its axes, then the plot command. */
static void stanza(FILE *gp, const char *name, const char *title_raw,
		   const char *xl_raw, const char *yl_raw, bool logx,
		   const char *plot)
{
	char title[512], xl[320], yl[320];

	plot_quoted(title_raw, title, sizeof(title));
	plot_quoted(xl_raw, xl, sizeof(xl));
	plot_quoted(yl_raw, yl, sizeof(yl));
	fprintf(gp, "\nreset; @common\n"
		"set title '%s'\nset xlabel '%s'\nset ylabel '%s'\n%s"
		"set terminal @pngterm; set output '%s.png'\n%s\n"
		"set terminal svg noenhanced size 900,560 font 'Sans,11' "
		"linewidth 1.5; set output '%s.svg'; replot; unset output\n",
		title, xl, yl, logx ? "set logscale x 10\n" : "", name, plot,
		name);
}

/* ---- a run ---- */

/* The run's CDF figures: what each shows, in requests.csv's column. */
static const struct {
	const char *name, *col, *label;
} cdfs[] = {
	{ "ttft-cdf", "ttft_s", "time to first token, s" },
	{ "tpot-cdf", "tpot_s", "time per output token after the first, s" },
	{ "itl-cdf", "itl_p50_s", "inter-token latency of a request, s" },
};

/* Writes the blocks of column col, one a group (and for ITL its p99 too),
 * into f; whether a wide spread (log x) and how many blocks. */
static size_t cdf_blocks(FILE *f, const struct csv *c, int gcol, int col,
			 int col99, bool *logx)
{
	double *v = xcalloc(c->nrow ? c->nrow : 1, sizeof(double));
	/* each group's first row, in the order the groups come */
	size_t *first = xcalloc(c->nrow ? c->nrow : 1, sizeof(size_t));
	size_t groups = 0, blocks = 0;
	double lo = INFINITY, hi = 0;
	char label[256];

	for (size_t r = 0; r < c->nrow; r++) {
		size_t g = 0;

		while (g < groups && strcmp(csv_str(c, first[g], gcol),
					    csv_str(c, r, gcol)))
			g++;
		if (g == groups)
			first[groups++] = r;
	}
	for (size_t g = 0; g < groups; g++) {
		const char *name = csv_str(c, first[g], gcol);
		bool zeros = false; /* every median 0: no line for them */

		for (int k = 0; k < (col99 >= 0 ? 2 : 1); k++) {
			int cc = k ? col99 : col;
			size_t n = 0, nz = 0;

			for (size_t q = first[g]; q < c->nrow; q++) {
				double x = csv_num(c, q, cc);

				if (strcmp(csv_str(c, q, gcol), name) || !isfinite(x))
					continue;
				if (x > 0)
					v[n++] = x;
				else
					nz++;
			}
			if (!n) {
				zeros = nz > 0;
				continue;
			}
			qsort(v, n, sizeof(double), order_cmp_double);
			lo = fmin(lo, v[0]);
			hi = fmax(hi, v[n - 1]);
			/* a line of the positive values only: the key says
			 * where zeros were left out (a verdict commits its
			 * tokens together, 0 apart) */
			fprintf(f, "%s\"%s%s%s\"\n", blocks ? "\n\n" : "",
				plot_quoted(name, label, sizeof(label)),
				col99 < 0 ? "" : k ? ", p99" : ", median",
				k && zeros ? " (every median 0)"
				: nz ? " (0s left out)" : "");
			/* from 0 at the least: one value is a step too */
			fprintf(f, "%.9g 0\n", v[0]);
			for (size_t i = 0; i < n; i++)
				fprintf(f, "%.9g %.9g\n", v[i],
					(double)(i + 1) / (double)n);
			blocks++;
		}
	}
	*logx = hi > 50 * lo;
	free(first);
	free(v);
	return blocks;
}

static int plot_run(const char *dir, struct od *od, FILE *gp,
		    struct plot_result *r, struct err *e)
{
	static const char *const cols[] = { "group", "ttft_s", "tpot_s",
		"itl_p50_s", "itl_p99_s", NULL };
	char path[4200];
	int col[5];
	struct csv c;

	snprintf(path, sizeof(path), "%s/requests.csv", dir);
	if (csv_load_cols(&c, path, cols, col, e) < 0)
		return -1;
	if (c.nrow == 0) {
		csv_release(&c);
		return err_set(e, "%s: no request finished: nothing to plot", path);
	}
	for (size_t i = 0; i < sizeof(cdfs) / sizeof(cdfs[0]); i++) {
		char dat[160], plot[512];
		bool logx;
		FILE *f;
		size_t n;

		snprintf(dat, sizeof(dat), "%s.dat", cdfs[i].name);
		if (!(f = od_open(od, dat, e))) {
			csv_release(&c);
			return -1;
		}
		n = cdf_blocks(f, &c, col[0], col[1 + i], i == 2 ? col[4] : -1,
			       &logx);
		fclose(f);
		if (!n)
			continue;
		snprintf(plot, sizeof(plot), "set key bottom right\n"
			 "set yrange [0:1]\nplot for [i=0:%zu] '%s' index i "
			 "using 1:2 with steps linewidth 2 title columnheader(1)",
			 n - 1, dat);
		stanza(gp, cdfs[i].name, dir, cdfs[i].label,
		       "share of requests", logx, plot);
		snprintf(r->name[r->n++], sizeof(r->name[0]), "%s", cdfs[i].name);
	}
	csv_release(&c);
	return 0;
}

/* ---- a sweep ---- */

/* sweep.csv's parameters are the columns between "point" and "n_seeds";
 * its metrics the NAME of each NAME_mean, NAME_ci95 pair after them. */
struct sweep_cols {
	int first_param, n_params; /* columns first_param .. + n_params - 1 */
	int seeds;                 /* n_seeds' column */
};

static int sweep_cols(const struct csv *c, struct sweep_cols *s,
		      struct err *e)
{
	int seeds = csv_col(c, "n_seeds", e);

	if (seeds < 1 || strcmp(c->cell[0], "point"))
		return err_set(e, "%s: not a sweep's table (its columns start "
			       "\"point\", the parameters, \"n_seeds\")", c->file);
	*s = (struct sweep_cols){ 1, seeds - 1, seeds };
	return 0;
}

/* The column of x (a parameter) or of y's mean (a metric), named as its
 * column or as the sweep file's pointer ("/all/alpha": "all.alpha"); -1
 * with e listing what there is. */
static int find_col(const struct csv *c, const struct sweep_cols *s,
		    const char *name, bool metric, struct err *e)
{
	char want[JX_PTR_MAX + 8], col[JX_PTR_MAX], have[2048] = "";
	size_t at = 0;

	if (*name == '/' && strlen(name) < JX_PTR_MAX)
		name = sweep_column(col, name);
	snprintf(want, sizeof(want), metric ? "%s_mean" : "%s", name);
	for (int k = metric ? s->seeds + 1 : s->first_param;
	     k < (metric ? (int)c->ncol : s->first_param + s->n_params); k++) {
		const char *h = c->cell[k];
		size_t len = strlen(h);

		if (!strcmp(h, want))
			return k;
		if (metric && (len < 5 || strcmp(h + len - 5, "_mean")))
			continue;
		at += (size_t)snprintf(have + at, at < sizeof(have) ?
				       sizeof(have) - at : 0, "%s%.*s",
				       at ? ", " : "", (int)(metric ? len - 5 : len),
				       h);
	}
	return err_set(e, "%s: no %s \"%s\" (its %s: %s)", c->file,
		       metric ? "metric" : "parameter", name,
		       metric ? "metrics" : "parameters", have);
}

/* Row r's series: "name=value" of every parameter but x, by's first. */
static void series_of(const struct csv *c, const struct sweep_cols *s,
		      size_t r, int xcol, int bycol, char *out, size_t cap)
{
	size_t at = 0;

	out[0] = '\0';
	for (int pass = 0; pass < 2; pass++)
		for (int k = s->first_param; k < s->first_param + s->n_params;
		     k++) {
			if (k == xcol || (pass == 0) != (k == bycol))
				continue;
			at += (size_t)snprintf(out + at, at < cap ? cap - at : 0,
					       "%s%s=%s", at ? ", " : "",
					       c->cell[k], csv_str(c, r, k));
		}
	if (!out[0])
		snprintf(out, cap, "%s", "all");
}

static bool numeric(const char *s)
{
	char *end;

	strtod(s, &end);
	return *s && !*end;
}

/* x's value in row r: the number, or the category's index among rows
 * first seen (with xtics naming them) when x is not numeric. */
static double x_of(const struct csv *c, size_t r, int xcol, bool num)
{
	double k = 0;

	if (num)
		return csv_num(c, r, xcol);
	for (size_t q = 0; q < r; q++) {
		bool seen = false;

		for (size_t p = 0; p < q && !seen; p++)
			seen = !strcmp(csv_str(c, p, xcol), csv_str(c, q, xcol));
		if (!strcmp(csv_str(c, q, xcol), csv_str(c, r, xcol)))
			return k;
		k += !seen;
	}
	return k;
}

/* The sweep's rows as blocks, one a series, each sorted by x. */
static size_t sweep_blocks(FILE *f, const struct csv *c,
			   const struct sweep_cols *s, int xcol, int ycol,
			   int bycol, bool num)
{
	char key[1024], other[1024];
	double *xs = xcalloc(c->nrow ? 2 * c->nrow : 1, sizeof(double));
	size_t blocks = 0;

	for (size_t r = 0; r < c->nrow; r++) {
		bool first = true;
		size_t n = 0;

		series_of(c, s, r, xcol, bycol, key, sizeof(key));
		for (size_t q = 0; q < r && first; q++) {
			series_of(c, s, q, xcol, bycol, other, sizeof(other));
			first = strcmp(key, other) != 0;
		}
		if (!first)
			continue;
		for (size_t q = r; q < c->nrow; q++) {
			series_of(c, s, q, xcol, bycol, other, sizeof(other));
			if (strcmp(key, other))
				continue;
			xs[2 * n] = x_of(c, q, xcol, num);
			xs[2 * n++ + 1] = (double)q;
		}
		qsort(xs, n, 2 * sizeof(double), order_cmp_double);
		fprintf(f, "%s\"%s\"\n", blocks++ ? "\n\n" : "",
			plot_quoted(key, other, sizeof(other)));
		for (size_t i = 0; i < n; i++) {
			size_t q = (size_t)xs[2 * i + 1];

			fprintf(f, "%.9g %s %s\n", xs[2 * i], csv_str(c, q, ycol),
				csv_str(c, q, ycol + 1));
		}
	}
	free(xs);
	return blocks;
}

static int plot_sweep(const char *dir, const struct plot_opts *o,
		      struct od *od, FILE *gp, struct plot_result *r,
		      struct err *e)
{
	char path[4200], name[200], dat[210], plot[3072], tics[2048] = "";
	char yname[256], yl[300];
	struct sweep_cols s;
	struct csv c;
	int xcol, ycol, bycol = -1;
	bool num = true, logx;
	double lo = INFINITY, hi = 0;
	size_t n, first = 0; /* first: the first row with a value of y */
	FILE *f;

	snprintf(path, sizeof(path), "%s/sweep.csv", dir);
	if (csv_load(&c, path, e) < 0)
		return -1;
	if (sweep_cols(&c, &s, e) < 0 || c.nrow == 0 ||
	    (xcol = o->x ? find_col(&c, &s, o->x, false, e)
			 : s.n_params ? s.first_param : -1) < 0 ||
	    (ycol = o->y ? find_col(&c, &s, o->y, true, e)
			 : c.ncol > (size_t)s.seeds + 2 ? s.seeds + 1 : -1) < 0 ||
	    (o->by && (bycol = find_col(&c, &s, o->by, false, e)) < 0)) {
		if (!e->msg[0] || c.nrow == 0)
			err_set(e, "%s: %s", path, c.nrow == 0 ? "no points" :
				"no parameter or no metric to plot");
		csv_release(&c);
		return -1;
	}
	while (first < c.nrow && !numeric(csv_str(&c, first, ycol)))
		first++;
	if (first == c.nrow) {
		err_set(e, "%s: %s has no value at any point (the runs have no "
			"such figure: null in each)", path, c.cell[ycol]);
		csv_release(&c);
		return -1;
	}
	for (size_t q = 0; q < c.nrow; q++) {
		num &= numeric(csv_str(&c, q, xcol));
		if (num) { /* an x of 0 or less has no place on a log axis */
			lo = fmin(lo, csv_num(&c, q, xcol));
			hi = fmax(hi, csv_num(&c, q, xcol));
		}
	}
	logx = num && lo > 0 && hi >= 20 * lo;
	for (size_t q = 0, at = 0; !num && q < c.nrow; q++) {
		char label[64];

		if (x_of(&c, q, xcol, false) != (double)at || at >= 64 ||
		    strlen(tics) + 80 >= sizeof(tics))
			continue;
		snprintf(tics + strlen(tics), sizeof(tics) - strlen(tics),
			 "%s'%s' %zu", at ? ", " : "",
			 plot_quoted(csv_str(&c, q, xcol), label, sizeof(label)), at);
		at++;
	}
	/* the metric's name: its mean's column less "_mean" */
	snprintf(yname, sizeof(yname), "%.*s", (int)strlen(c.cell[ycol]) - 5,
		 c.cell[ycol]);
	snprintf(name, sizeof(name), "%.90s-vs-%.90s", yname, c.cell[xcol]);
	for (char *p = name; *p; p++)
		if (*p == '/' || *p == ' ')
			*p = '_';
	snprintf(dat, sizeof(dat), "%s.dat", name);
	if (!(f = od_open(od, dat, e))) {
		csv_release(&c);
		return -1;
	}
	n = sweep_blocks(f, &c, &s, xcol, ycol, bycol, num);
	fclose(f);
	snprintf(plot, sizeof(plot), "set key top left\n%s%s%s"
		 "plot for [i=0:%zu] '%s' index i using 1:2:3 with yerrorlines "
		 "title columnheader(1)", num ? "" : "set xtics (",
		 num ? "" : tics, num ? "" : ")\nset offsets 0.3, 0.3, 0, 0\n",
		 n - 1, dat);
	snprintf(yl, sizeof(yl), "%s (mean, 95%% interval)", yname);
	stanza(gp, name, dir, c.cell[xcol], yl, logx, plot);
	snprintf(r->name[r->n++], sizeof(r->name[0]), "%s", name);
	csv_release(&c);
	return 0;
}

int plot_dir(const char *dir, const struct plot_opts *o,
	     struct plot_result *r, struct err *e)
{
	char path[4300], out[4200];
	struct od od;
	FILE *gp;
	int rc;

	*r = (struct plot_result){ 0 };
	snprintf(path, sizeof(path), "%s/sweep.csv", dir);
	r->sweep = access(path, R_OK) == 0;
	snprintf(path, sizeof(path), "%s/requests.csv", dir);
	if (!r->sweep && !fs_is_dir(dir))
		return err_set(e, "%s: no such folder (plot draws the folder "
			       "of a run's or a sweep's results)", dir);
	if (!r->sweep && access(path, R_OK) != 0)
		return err_set(e, "%s: neither a run's results (summary.json, "
			       "requests.csv) nor a sweep's (sweep.csv)", dir);
	if (!r->sweep && (o->x || o->y || o->by))
		return err_set(e, "%s: a run's figures are its CDFs: --x, --y and "
			       "--by are a sweep's", dir);
	snprintf(out, sizeof(out), "%s", o->out ? o->out : "");
	if (!o->out)
		snprintf(out, sizeof(out), "%s/plots", dir);
	/* figures replace figures only: never a run's, sweep's or plan's
	 * results (the folder read among them) */
	snprintf(path, sizeof(path), "%s/" GP_NAME, out);
	if (access(out, F_OK) == 0 && !fs_dir_empty(out) &&
	    access(path, F_OK) != 0)
		return err_set(e, "'%s' exists and holds no figures (no %s): "
			       "plot replaces only a folder of its own figures; "
			       "name another -o", out, GP_NAME);
	if (od_begin(&od, out, "plot", true, e) < 0)
		return -1;
	if (!(gp = od_open(&od, GP_NAME, e))) {
		od_abort(&od);
		return -1;
	}
	fputs(gp_head, gp);
	fprintf(gp, "# the figures of %s\n", dir);
	rc = r->sweep ? plot_sweep(dir, o, &od, gp, r, e)
		      : plot_run(dir, &od, gp, r, e);
	fclose(gp);
	if (rc == 0) {
		r->drawn = plot_gnuplot(od.tmp, GP_NAME);
		snprintf(r->dir, sizeof(r->dir), "%s", out);
		rc = od_commit(&od, e);
	} else {
		od_abort(&od);
	}
	return rc;
}
