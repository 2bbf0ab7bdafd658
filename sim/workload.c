/* workload.c: arrival traces in the formats of formats[] (a row and a
 * function each), every field of every row checked.
 *
 * A reader turns its file into rows of (arrival_s, prompt, output), in file
 * order; wl_trace_load then requires the arrival times non-decreasing,
 * moves a trace of dates so that its first request arrives at 0, and
 * divides the times by the replay speed. The CSV formats are
 * read by their header's column names, so their columns may come in any
 * order and others may sit between them. */
#include "workload.h"
#include "fs.h"
#include "llama.h"
#include "mem.h"
#include "mload.h"
#include "rng.h"
#include "tok.h"

#include <gsl/gsl_randist.h>

#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_BYTES 4096

static void add_row(struct wl_trace *t, size_t *cap, long line, double a,
		    double pr, double out)
{
	if (t->n == *cap) {
		*cap = *cap ? 2 * *cap : 256;
		t->rows = xrealloc(t->rows, *cap * sizeof(*t->rows));
	}
	t->rows[t->n++] = (struct wl_row){ a, (int32_t)pr, (int32_t)out, -1,
					   line <= INT32_MAX ? (int32_t)line : 0 };
}

/* The users seen so far: an open-addressing table of their names (a power
 * of two of slots, at most half full), each with its number. */
struct users {
	char **name;   /* (cap) owned */
	int32_t *id;   /* (cap) owned */
	size_t cap, n;
};

static uint64_t hash_str(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* The number of the user named s[0 .. len), a new one if unseen. */
static int32_t user_id(struct users *u, const char *s, size_t len)
{
	size_t i;

	if (2 * (u->n + 1) > u->cap) {
		struct users big = { .cap = u->cap ? 2 * u->cap : 1024 };

		big.name = xcalloc(big.cap, sizeof(char *));
		big.id = xcalloc(big.cap, sizeof(int32_t));
		for (size_t k = 0; k < u->cap; k++) {
			if (!u->name[k])
				continue;
			i = hash_str(u->name[k], strlen(u->name[k])) & (big.cap - 1);
			while (big.name[i])
				i = (i + 1) & (big.cap - 1);
			big.name[i] = u->name[k];
			big.id[i] = u->id[k];
		}
		big.n = u->n;
		free(u->name);
		free(u->id);
		*u = big;
	}
	i = hash_str(s, len) & (u->cap - 1);
	while (u->name[i] && (strlen(u->name[i]) != len ||
			      memcmp(u->name[i], s, len)))
		i = (i + 1) & (u->cap - 1);
	if (!u->name[i]) {
		u->name[i] = xmalloc(len + 1);
		memcpy(u->name[i], s, len);
		u->name[i][len] = '\0';
		u->id[i] = (int32_t)u->n++;
	}
	return u->id[i];
}

static void users_release(struct users *u)
{
	for (size_t k = 0; k < u->cap; k++)
		free(u->name[k]);
	free(u->name);
	free(u->id);
}

/* The number a field starts with, the field ending after it (blanks
 * aside) at a comma or the line's end; false if it does not. */
static bool number(const char *text, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(text, &end);
	for (const char *c = text; c < end; c++) /* decimal only: no 0x10 */
		if (*c == 'x' || *c == 'X')
			return false;
	while (*end == ' ' || *end == '\t')
		end++;
	/* ERANGE below DBL_MIN: a subnormal, or 0, is a number */
	return end != text && (!*end || *end == ',') &&
	       (!errno || fabs(*v) < DBL_MIN);
}

/* A token count at text: a whole number in [lo, WL_TOKENS_MAX]. */
static int tokens(const char *path, long line, const char *col,
		  const char *text, double lo, double *out, struct err *e)
{
	double v;

	if (!number(text, &v) || !(v >= lo) || v > WL_TOKENS_MAX || v != floor(v))
		return err_set(e, "%s:%ld: %s: expected a whole number of tokens "
			       "in [%g, %g], got \"%.*s\"", path, line, col, lo,
			       WL_TOKENS_MAX, (int)strcspn(text, ",\n"), text);
	*out = v;
	return 0;
}

/* A time in seconds at text: a number >= 0 (in units of scale s). */
static int seconds(const char *path, long line, const char *col,
		   const char *text, double scale, double *out, struct err *e)
{
	double v;

	if (!number(text, &v) || !(v >= 0) || !isfinite(v))
		return err_set(e, "%s:%ld: %s: expected a time >= 0, got "
			       "\"%.*s\"", path, line, col,
			       (int)strcspn(text, ",\n"), text);
	*out = v * scale;
	return 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant's
 * days_from_civil). */
static long days_from_civil(long y, long m, long d)
{
	long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* "YYYY-MM-DD HH:MM:SS[.frac]" (the Azure traces' TIMESTAMP; a "T" may
 * stand for the space, a "Z" or "+00:00" may follow) as seconds since
 * 1970. */
static int date_time(const char *path, long line, const char *col,
		     const char *text, double scale, double *out,
		     struct err *e)
{
	int y, mo, d, h, mi, n = 0;
	double s;
	char sep;

	(void)scale;
	if (sscanf(text, "%4d-%2d-%2d%c%2d:%2d:%lf%n", &y, &mo, &d, &sep, &h,
		   &mi, &s, &n) != 7 || (sep != ' ' && sep != 'T') ||
	    mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    !(s >= 0 && s < 61) ||
	    !strchr(",Z+\n", text[n] ? text[n] : '\n'))
		return err_set(e, "%s:%ld: %s: expected a date and time "
			       "YYYY-MM-DD HH:MM:SS[.fraction], got \"%.*s\"",
			       path, line, col, (int)strcspn(text, ",\n"),
			       text);
	*out = (double)days_from_civil(y, mo, d) * 86400.0 + h * 3600.0 +
	       mi * 60.0 + s;
	return 0;
}

typedef int time_fn(const char *path, long line, const char *col,
		    const char *text, double scale, double *out,
		    struct err *e);

/* A CSV trace: the header's names of the time and the two token columns,
 * how the time reads, and the rows that are no requests (a response of no
 * tokens: a failed request, skipped and counted). */
struct csv_format {
	const char *time, *prompt, *output;
	time_fn *read_time;
	double time_scale;    /* the time column's unit in seconds */
	bool skip_no_output;
};

/* The field number col of line (0-based), or NULL. */
static const char *nth_field(const char *line, int col)
{
	for (int i = 0; i < col; i++) {
		line = strchr(line, ',');
		if (!line)
			return NULL;
		line++;
	}
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

/* The columns of header named as f names them, or -1 with e's message. */
static int header_cols(const char *path, char *header,
		       const struct csv_format *f, int col[3], struct err *e)
{
	const char *want[3] = { f->time, f->prompt, f->output };
	int i = 0;

	col[0] = col[1] = col[2] = -1;
	for (char *p = header, *end; p; p = end ? end + 1 : NULL, i++) {
		end = strchr(p, ',');
		if (end)
			*end = '\0';
		while (*p == ' ')
			p++;
		for (int k = 0; k < 3; k++)
			if (!strcmp(p, want[k]))
				col[k] = i;
	}
	for (int k = 0; k < 3; k++)
		if (col[k] < 0)
			return err_set(e, "%s:1: expected a column \"%s\" in the "
				       "header (%s, %s, %s), found none", path,
				       want[k], f->time, f->prompt, f->output);
	return 0;
}

static int read_csv(FILE *in, const char *path, const struct csv_format *f,
		    struct wl_trace *t, struct err *e)
{
	char buf[LINE_MAX_BYTES];
	size_t cap = 0;
	long line = 1;
	int col[3];

	if (!fgets(buf, sizeof(buf), in))
		return err_set(e, "%s: empty", path);
	buf[strcspn(buf, "\r\n")] = '\0';
	if (header_cols(path, buf, f, col, e) < 0)
		return -1;
	while (fgets(buf, sizeof(buf), in)) {
		const char *v[3];
		double a, pr, out;

		line++;
		buf[strcspn(buf, "\r\n")] = '\0';
		if (!buf[0])
			continue;
		for (int k = 0; k < 3; k++)
			if (!(v[k] = nth_field(buf, col[k])))
				return err_set(e, "%s:%ld: expected a field in "
					       "column %d, the row has fewer",
					       path, line, col[k] + 1);
		if (f->read_time(path, line, f->time, v[0], f->time_scale, &a,
				 e) < 0 ||
		    tokens(path, line, f->prompt, v[1], 1, &pr, e) < 0 ||
		    tokens(path, line, f->output, v[2], 0, &out, e) < 0)
			return -1;
		if (out < 1 && f->skip_no_output) {
			t->skipped++;
			continue;
		}
		if (out < 1)
			return err_set(e, "%s:%ld: %s: expected at least 1 token, "
				       "got 0", path, line, f->output);
		add_row(t, &cap, line, a, pr, out);
	}
	return 0;
}

static const struct csv_format azure = { "TIMESTAMP", "ContextTokens",
	"GeneratedTokens", date_time, 1, false };
static const struct csv_format burstgpt = { "Timestamp", "Request tokens",
	"Response tokens", seconds, 1, true };
static const struct csv_format own = { "arrival_s", "prompt_tokens",
	"output_tokens", seconds, 1, false };

static int read_azure(FILE *in, const char *path, const struct wl_text *x,
		      struct wl_trace *t, struct err *e)
{
	(void)x;
	return read_csv(in, path, &azure, t, e);
}

static int read_burstgpt(FILE *in, const char *path, const struct wl_text *x,
			 struct wl_trace *t, struct err *e)
{
	(void)x;
	return read_csv(in, path, &burstgpt, t, e);
}

/* The project's own CSV: a header naming its columns, or none (the three
 * columns in order, and an optional fourth, the user); '#' starts a
 * comment. */
static int read_own(FILE *in, const char *path, const struct wl_text *x,
		    struct wl_trace *t, struct err *e)
{
	char buf[LINE_MAX_BYTES];
	size_t cap = 0;
	long line = 0;
	struct users u = { 0 };
	int rc = 0;

	(void)x;
	while (rc == 0 && fgets(buf, sizeof(buf), in)) {
		char *p = buf;
		const char *pr_text, *out_text, *user;
		double a, pr, out;

		line++;
		buf[strcspn(buf, "#\r\n")] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		/* the header, before any row (comments may come first) */
		if (!*p || (!t->n && !strncmp(p, "arrival_s", 9)))
			continue;
		if (!(pr_text = nth_field(p, 1)) || !(out_text = nth_field(p, 2))) {
			rc = err_set(e, "%s:%ld: expected arrival_s,"
				     "prompt_tokens,output_tokens[,user], got "
				     "\"%s\"", path, line, err_quotable(p, 60));
			break;
		}
		if (seconds(path, line, own.time, p, 1, &a, e) < 0 ||
		    tokens(path, line, own.prompt, pr_text, 1, &pr, e) < 0 ||
		    tokens(path, line, own.output, out_text, 1, &out, e) < 0) {
			rc = -1;
			break;
		}
		add_row(t, &cap, line, a, pr, out);
		if (nth_field(p, 4)) {
			rc = err_set(e, "%s:%ld: expected at most four fields "
				     "(arrival_s, prompt_tokens, output_tokens, "
				     "user), got more", path, line);
			break;
		}
		user = nth_field(p, 3);
		if ((user != NULL) != (t->n == 1 ? user != NULL : u.n > 0)) {
			rc = err_set(e, "%s:%ld: user: expected %s, as every row "
				     "has", path, line, user ? "no fourth field"
							 : "a user");
			break;
		}
		if (user)
			t->rows[t->n - 1].user = user_id(&u, user,
							 strcspn(user, ", \t"));
	}
	t->users = (int32_t)u.n;
	users_release(&u);
	return rc;
}

/* Mooncake's JSON lines: {"timestamp": ms, "input_length": N,
 * "output_length": N, ...}. */
static int read_mooncake(FILE *in, const char *path, const struct wl_text *x,
			 struct wl_trace *t, struct err *e)
{
	static const char *const keys[] = { "timestamp", "input_length",
					    "output_length" };
	char buf[1 << 16];
	size_t cap = 0;
	long line = 0;

	(void)x;
	while (fgets(buf, sizeof(buf), in)) {
		json_error_t je;
		json_t *o;
		double v[3];

		line++;
		if (!buf[strspn(buf, " \t\r\n")])
			continue;
		if (!(o = json_loads(buf, 0, &je)) || !json_is_object(o)) {
			json_decref(o);
			return err_set(e, "%s:%ld: expected a JSON object a line, "
				       "got %s", path, line, je.text[0] ?
				       je.text : "another value");
		}
		for (int k = 0; k < 3; k++) {
			json_t *f = json_object_get(o, keys[k]);

			v[k] = json_number_value(f);
			if (!json_is_number(f) || !(v[k] >= (k ? 1 : 0)) ||
			    (k && (v[k] != floor(v[k]) || v[k] > WL_TOKENS_MAX))) {
				json_decref(o);
				return err_set(e, "%s:%ld: /%s: expected %s, got "
					       "%s", path, line, keys[k],
					       k ? "a whole number of tokens >= 1"
						 : "a time in ms >= 0",
					       f ? "another value" : "nothing");
			}
		}
		json_decref(o);
		add_row(t, &cap, line, v[0] / 1e3, v[1], v[2]);
	}
	return 0;
}

/* Whether a ShareGPT turn's speaker is the user's, or the model's. */
static bool asks(const char *from)
{
	return from && (!strcmp(from, "human") || !strcmp(from, "user"));
}

static bool answers(const char *from)
{
	return from && (!strcmp(from, "gpt") || !strcmp(from, "assistant") ||
			!strcmp(from, "chatgpt") || !strcmp(from, "bard"));
}

/* A ShareGPT conversation's first question and the answer after it (as
 * vLLM's serving benchmark takes them), into *q and *a; false if it has
 * none. */
static bool first_exchange(json_t *conv, const char **q, const char **a)
{
	json_t *turns = json_object_get(conv, "conversations");

	for (size_t k = 0; k + 1 < json_array_size(turns); k++) {
		json_t *u = json_array_get(turns, k), *v = json_array_get(turns,
								       k + 1);

		if (asks(json_string_value(json_object_get(u, "from"))) &&
		    answers(json_string_value(json_object_get(v, "from"))) &&
		    (*q = json_string_value(json_object_get(u, "value"))) &&
		    (*a = json_string_value(json_object_get(v, "value"))))
			return true;
	}
	return false;
}

/* ShareGPT: a JSON list of conversations ({"conversations": [{"from",
 * "value"}, ...]}); a request is each one's first question and answer,
 * their lengths in the named tokenizer's tokens (the question as a
 * document's start); the file has no times, so the arrivals are Poisson at
 * x->rate_per_s from x->seed. A conversation with no exchange, or an empty
 * side, is skipped and counted. */
static int read_sharegpt(FILE *in, const char *path, const struct wl_text *x,
			 struct wl_trace *t, struct err *e)
{
	json_error_t je;
	json_t *doc, *conv;
	struct llama m;
	struct tok tk;
	struct quant qt;
	size_t i, cap = 0, ids_cap = 0;
	int *ids = NULL;
	double at = 0;
	gsl_rng *r;

	if (!x || !x->tokenizer || !(x->rate_per_s > 0))
		return err_set(e, "%s: ShareGPT holds text and no times: give "
			       "the workload's trace_tokenizer (a model whose "
			       "tokenizer counts the tokens) and "
			       "trace_rate_per_s (the arrivals' Poisson rate)",
			       path);
	if (!(doc = json_loadf(in, 0, &je)) || !json_is_array(doc)) {
		json_decref(doc);
		return err_set(e, "%s:%d: expected a JSON list of conversations, "
			       "got %s", path, je.line, doc ? "another value"
							   : je.text);
	}
	if (mload_spec(x->tokenizer, "f32", &m, &tk, &qt, e) < 0) {
		json_decref(doc);
		return err_prefix(e, "%s: trace_tokenizer", path);
	}
	llama_release(&m);
	r = rng_new(x->seed, rng_stream_id("workload/sharegpt"));
	json_array_foreach(doc, i, conv) {
		const char *q, *a;
		int nq, na;
		size_t need;

		if (!first_exchange(conv, &q, &a)) {
			t->skipped++;
			continue;
		}
		need = (strlen(q) > strlen(a) ? strlen(q) : strlen(a)) + 3;
		if (need > ids_cap) {
			ids_cap = 2 * need;
			ids = xrealloc(ids, ids_cap * sizeof(int));
		}
		nq = tok_encode(&tk, q, 1, 0, ids);
		na = tok_encode(&tk, a, 0, 0, ids);
		if (nq < 1 || na < 1 || nq > WL_TOKENS_MAX || na > WL_TOKENS_MAX) {
			t->skipped++;
			continue;
		}
		at += gsl_ran_exponential(r, 1 / x->rate_per_s);
		add_row(t, &cap, 0, at, nq, na);
	}
	rng_free(r);
	free(ids);
	tok_release(&tk);
	json_decref(doc);
	return 0;
}

/* Whether first (the file's first line) looks like each format. */
static bool is_azure(const char *first)
{
	return strstr(first, azure.time) && strstr(first, azure.prompt);
}

static bool is_burstgpt(const char *first)
{
	return strstr(first, burstgpt.prompt) && strstr(first, burstgpt.output);
}

static bool is_mooncake(const char *first)
{
	return first[strspn(first, " \t")] == '{';
}

static bool is_sharegpt(const char *first)
{
	return first[strspn(first, " \t\r\n")] == '[';
}

static bool is_own(const char *first)
{
	(void)first;
	return true;
}

/* The trace formats, a row each (what each reads: docs/config.md):
 * - azure: the Azure LLM inference traces 2023/2024, TIMESTAMP (a
 *   date-time; the first request at 0), ContextTokens, GeneratedTokens;
 * - burstgpt: Timestamp (s), Request tokens, Response tokens, rows of 0
 *   response tokens (failures) skipped;
 * - mooncake: JSON lines of timestamp (ms), input_length, output_length;
 * - sharegpt: conversations (a JSON list), each one's first human turn
 *   and the reply in trace_tokenizer's tokens, arrivals Poisson at
 *   trace_rate_per_s;
 * - csv: arrival_s,prompt_tokens,output_tokens[,user], a header optional,
 *   '#' comments, a user's requests to one tenant. */
static const struct wl_format {
	const char *name;
	bool (*detect)(const char *first);
	int (*read)(FILE *in, const char *path, const struct wl_text *x,
		    struct wl_trace *t, struct err *e);
	bool dates;       /* times are dates: the first request is at 0 */
	bool text;        /* text without times or counts: it takes the
			     config's wl_text */
} formats[] = {
	{ "azure", is_azure, read_azure, true, false },
	{ "burstgpt", is_burstgpt, read_burstgpt, false, false },
	{ "mooncake", is_mooncake, read_mooncake, false, false },
	{ "sharegpt", is_sharegpt, read_sharegpt, false, true },
	{ "csv", is_own, read_own, false, false },
};
#define N_FORMATS (sizeof(formats) / sizeof(formats[0]))

const char *const *wl_format_names(void)
{
	static const char *names[N_FORMATS + 2] = { "auto" };

	if (!names[1])
		for (size_t i = 0; i < N_FORMATS; i++)
			names[i + 1] = formats[i].name;
	return names;
}

/* The format called name, or ("auto") the first whose detect takes the
 * file's first line. */
static const struct wl_format *format_of(FILE *in, const char *name)
{
	char first[LINE_MAX_BYTES] = "";

	if (strcmp(name, "auto")) {
		for (size_t i = 0; i < N_FORMATS; i++)
			if (!strcmp(formats[i].name, name))
				return &formats[i];
		return NULL;
	}
	if (fgets(first, sizeof(first), in)) {
		rewind(in);
		fs_skip_bom(in);
	}
	for (size_t i = 0; i < N_FORMATS; i++)
		if (formats[i].detect(first))
			return &formats[i];
	return NULL;
}

char *wl_trace_where(const struct wl_trace *t, size_t i, char *buf, size_t n)
{
	if (t->rows[i].line)
		snprintf(buf, n, ":%d", (int)t->rows[i].line);
	else
		snprintf(buf, n, ": request %zu", i + 1);
	return buf;
}

/* Arrival times non-decreasing, moved to start at 0 when they are dates,
 * divided by speed. */
static int settle(struct wl_trace *t, const char *path, bool dates,
		  double speed, struct err *e)
{
	double t0;

	if (t->n == 0)
		return err_set(e, "%s: the arrival trace has no rows", path);
	t0 = dates ? t->rows[0].arrive_s : 0;
	for (size_t i = 1; i < t->n; i++)
		if (t->rows[i].arrive_s < t->rows[i - 1].arrive_s) {
			double a = t->rows[i - 1].arrive_s - t0;
			double b = t->rows[i].arrive_s - t0;
			char at[64], sa[32], sb[32];
			int p = 6;

			/* the digits that tell the two apart */
			do {
				snprintf(sa, sizeof(sa), "%.*g", p, a);
				snprintf(sb, sizeof(sb), "%.*g", p, b);
			} while (!strcmp(sa, sb) && ++p <= 17);
			wl_trace_where(t, i, at, sizeof(at));
			return err_set(e, "%s%s: expected an arrival time >= "
				       "the one before (%s s), got %s s: sort "
				       "the trace by time", path, at, sa, sb);
		}
	for (size_t i = 0; i < t->n; i++)
		t->rows[i].arrive_s = (t->rows[i].arrive_s - t0) / speed;
	return 0;
}

int wl_trace_load(struct wl_trace *t, const char *path, const char *format,
		  double speed, const struct wl_text *text, struct err *e)
{
	FILE *f = fopen(path, "r");
	const struct wl_format *fmt;
	int rc;

	*t = (struct wl_trace){ 0 };
	if (!f)
		return err_set(e, "%s: cannot read arrival trace: %s", path,
			       strerror(errno));
	fs_skip_bom(f);
	if (!(fmt = format_of(f, format))) {
		fclose(f);
		return err_set(e, "%s: unknown trace format \"%s\"", path,
			       format);
	}
	t->format = fmt->name;
	t->text = fmt->text;
	rc = fmt->read(f, path, text, t, e);
	fclose(f);
	if (rc < 0 || settle(t, path, fmt->dates, speed, e) < 0) {
		wl_trace_release(t);
		return -1;
	}
	return 0;
}

void wl_trace_assign(struct wl_trace *t, uint32_t tenants)
{
	size_t *fill = xcalloc((size_t)tenants + 1, sizeof(size_t));

	free(t->first);
	free(t->of);
	t->first = xcalloc((size_t)tenants + 1, sizeof(size_t));
	t->of = xcalloc(t->n ? t->n : 1, sizeof(size_t));
	/* counts, their running sums, then the rows in file (time) order */
	for (size_t i = 0; i < t->n; i++)
		t->first[(t->users ? (size_t)t->rows[i].user : i) % tenants + 1]++;
	for (uint32_t k = 0; k < tenants; k++)
		t->first[k + 1] += t->first[k];
	for (size_t i = 0; i < t->n; i++) {
		size_t k = (t->users ? (size_t)t->rows[i].user : i) % tenants;

		t->of[t->first[k] + fill[k]++] = i;
	}
	free(fill);
}

void wl_trace_release(struct wl_trace *t)
{
	free(t->first);
	free(t->of);
	free(t->rows);
	*t = (struct wl_trace){ 0 };
}
