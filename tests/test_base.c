/* test_base.c: the base layer's containers and file helpers. */
#include "harness.h"

#include "csv.h"
#include "err.h"
#include "fmt.h"
#include "fs.h"
#include "jx.h"
#include "ring.h"
#include "rng.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

RING_DEFINE(iring, int)

/* Pushes and pops interleaved so that the ring wraps, then grows while
 * wrapped: values come out in the order they went in, and _at sees them
 * where a FIFO would. */
static void ring_fifo_order(void)
{
	struct iring r = { 0 };
	int next_in = 0, next_out = 0;

	for (int round = 0; round < 6; round++) {
		for (int i = 0; i < 5 + 3 * round; i++)
			iring_push(&r, next_in++);
		for (uint32_t i = 0; i < r.n; i++)
			CHECK(*iring_at(&r, i) == next_out + (int)i);
		for (int i = 0; i < 4; i++)
			CHECK(iring_pop(&r) == next_out++);
	}
	CHECK(r.n == (uint32_t)(next_in - next_out));
	CHECK((r.cap & (r.cap - 1)) == 0 && r.cap >= r.n);
	while (r.n)
		CHECK(iring_pop(&r) == next_out++);
	CHECK(next_out == next_in);
	iring_release(&r);
	CHECK(r.v == NULL && r.n == 0 && r.cap == 0);
}

/* Entries in a folder, "." and ".." not counted. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

/* fs_atomic: the target appears whole on commit, and an abort leaves
 * neither target nor temporary; fs_slurp reads back what was written;
 * fs_mkdirs makes a chain of folders and accepts one that exists. */
static void fs_whole_files(void)
{
	const char *dir = t_tmpdir();
	char path[1100], deep[1024];
	struct fs_atomic a;
	struct err e;
	struct stat st;
	size_t len;
	char *text;

	snprintf(deep, sizeof(deep), "%s/a/b/c", dir);
	CHECK_MSG(fs_mkdirs(deep, &e) == 0, "%s", e.msg);
	CHECK(stat(deep, &st) == 0 && S_ISDIR(st.st_mode));
	/* a folder read whole says it is one (it had said EIO) */
	CHECK(!fs_slurp(deep, NULL) && errno == EISDIR);
	CHECK_MSG(fs_mkdirs(deep, &e) == 0, "%s", e.msg);
	snprintf(path, sizeof(path), "%s/x.txt", deep);
	CHECK(fs_atomic_open(&a, path, &e) != NULL);
	fputs("half", a.f);
	fs_atomic_abort(&a);
	CHECK(entries(deep) == 0);
	CHECK_MSG(fs_write_atomic(path, "whole\n", &e) == 0, "%s", e.msg);
	CHECK(entries(deep) == 1);
	text = fs_slurp(path, &len);
	CHECK(text && len == 6 && !strcmp(text, "whole\n"));
	free(text);
	CHECK(fs_slurp("/nonexistent/x", NULL) == NULL);
	snprintf(path, sizeof(path), "%s/a/b/c/x.txt/below", dir);
	CHECK(fs_mkdirs(path, &e) < 0 && strstr(e.msg, "cannot make"));
	snprintf(path, sizeof(path), "%s/none/x.txt", dir);
	CHECK(fs_write_atomic(path, "x", &e) < 0 && strstr(e.msg, "cannot write"));
}

/* Counts the values v for which fmt_g9 and snprintf's "%.9g" differ,
 * printing the first few. */
static size_t g9_mismatch(double v, size_t bad)
{
	char a[FMT_G9_MAX], b[64];
	int n = fmt_g9(a, v);

	snprintf(b, sizeof(b), "%.9g", v);
	if (!strcmp(a, b) && n == (int)strlen(b))
		return bad;
	if (bad < 5)
		fprintf(stderr, "    %a: fmt_g9 \"%s\", printf \"%s\"\n", v, a, b);
	return bad + 1;
}

/* fmt_g9 writes what printf's %.9g writes: for random bit patterns (every
 * exponent, subnormals, infinities and NaNs), values spread over 24
 * decades, decimal fractions, ties at the ninth digit, powers of ten and
 * their neighbours. */
static void g9_as_printf(void)
{
	gsl_rng *r = rng_new(3, rng_stream_id("test/fmt"));
	size_t bad = 0;

	for (int i = 0; i < 400000; i++) {
		uint64_t bits = (uint64_t)gsl_rng_get(r) << 32 | gsl_rng_get(r);
		double v;

		memcpy(&v, &bits, sizeof(v));
		bad = g9_mismatch(v, bad);
		v = (gsl_rng_uniform(r) < 0.5 ? -1 : 1) *
		    pow(10, gsl_rng_uniform(r) * 24 - 12);
		bad = g9_mismatch(v, bad);
		/* decimal fractions: k / 10^j, as a config or a sum makes */
		v = ((double)gsl_rng_uniform_int(r, 100000) * 100000 +
		     (double)gsl_rng_uniform_int(r, 100000)) /
		    pow(10, (double)gsl_rng_uniform_int(r, 13));
		bad = g9_mismatch(v, bad);
		/* an exact tie at the ninth digit: ten digits ending in 5 */
		v = (double)(gsl_rng_uniform_int(r, 900000000UL) + 100000000UL) *
			    10 + 5;
		bad = g9_mismatch(v / pow(2, (double)gsl_rng_uniform_int(r, 8)),
				  bad);
	}
	for (int k = -30; k <= 30; k++) {
		double p = pow(10, k);

		bad = g9_mismatch(p, bad);
		bad = g9_mismatch(nextafter(p, 0), bad);
		bad = g9_mismatch(nextafter(p, INFINITY), bad);
		bad = g9_mismatch(p * 0.9999999995, bad);
		bad = g9_mismatch(p * 0.99999999949999, bad);
	}
	static const double edge[] = { 0.0, -0.0, 1, -1, 999999999.5, 999999999.4,
				       99999999.95, 0.0001, 0.00001, 0.000099999999995,
				       1e9, 123456789, 1234567895, 5e-324, 1.7976931348623157e308 };
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
		bad = g9_mismatch(edge[i], bad);
	CHECK_MSG(bad == 0, "%zu values formatted unlike printf", bad);
	rng_free(r);
}

/* fmt_field writes one value as fprintf would, for each format the CSV
 * writers use. */
static void field_as_fprintf(void)
{
	char *got = NULL, want[256];
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);

	fmt_field(f, "%d", -2147483647 - 1);
	fmt_field(f, "%d", 0);
	fmt_field(f, "%d", 42);
	fmt_field(f, "%u", 4294967295u);
	fmt_field(f, "%llu", 18446744073709551615ULL);
	fmt_field(f, "%s", "phones");
	fmt_field(f, "%.9g", 0.0835559216);
	fmt_field(f, "%.3f", 2.5);
	fclose(f);
	snprintf(want, sizeof(want), "%d%d%d%u%llu%s%.9g%.3f", -2147483647 - 1,
		 0, 42, 4294967295u, 18446744073709551615ULL, "phones",
		 0.0835559216, 2.5);
	CHECK_MSG(!strcmp(got, want), "got \"%s\", want \"%s\"", got, want);
	free(got);
}

/* A list of names for a message: joined, "none" for none, cut to fit */
static void names_listed(void)
{
	static const char *const three[] = { "a", "bb", "ccc", NULL };
	static const char *const none[] = { NULL };
	char buf[64], small[6];

	CHECK(!strcmp(fmt_names(buf, sizeof(buf), three), "a, bb, ccc"));
	CHECK(!strcmp(fmt_names(buf, sizeof(buf), none), "none"));
	CHECK(!strcmp(fmt_names(small, sizeof(small), three), "a, bb"));
}

/* A text saved with a UTF-8 byte order mark (Notepad, Excel) reads as
 * the text after it: JSON, CSV, and a stream fs_skip_bom starts; a text
 * without one is left whole. */
static void byte_order_mark(void)
{
	struct err e;
	struct csv c;
	json_t *v;
	FILE *f;
	char line[16];

	v = jx_load(t_write("b.json", FS_BOM "{\"a\": 1}"), &e);
	CHECK_MSG(v && json_integer_value(json_object_get(v, "a")) == 1, "%s",
		  v ? "" : e.msg);
	json_decref(v);
	CHECK_MSG(csv_load(&c, t_write("b.csv", FS_BOM "x,y\n1,2\n"), &e) == 0 &&
		  !strcmp(csv_str(&c, 0, 0), "1") &&
		  csv_col(&c, "x", &e) == 0, "%s", e.msg);
	csv_release(&c);
	for (int bom = 0; bom < 2; bom++) {
		f = fopen(t_write("b.txt", bom ? FS_BOM "abc\n" : "\xEF" "bc\n"),
			  "r");
		fs_skip_bom(f);
		CHECK(fgets(line, sizeof(line), f) &&
		      !strcmp(line, bom ? "abc\n" : "\xEF" "bc\n"));
		fclose(f);
	}
}

const struct tcase base_tests[] = {
	{ "base: a byte order mark before a text is read past",
	  byte_order_mark },
	{ "base: a list of names for a message", names_listed },
	{ "base: a ring keeps FIFO order through wrapping and growth",
	  ring_fifo_order },
	{ "base: whole files, folders, atomic writes", fs_whole_files },
	{ "base: fmt_g9 writes what printf's %.9g writes", g9_as_printf },
	{ "base: fmt_field writes one value as fprintf would",
	  field_as_fprintf },
	{ 0 },
};
