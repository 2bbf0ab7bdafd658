/* test_rng.c: random streams and distributions. */
#include "harness.h"

#include "dist.h"
#include "rng.h"

#include <gsl/gsl_randist.h>
#include <string.h>

/* Reads a distribution from JSON text into d (range >= 0). */
static int parse(const char *text, struct jx_range r, struct dist *d,
		 struct err *e)
{
	json_t *obj = json_pack("{s:o}", "x", json_loads(text, JSON_DECODE_ANY,
							 NULL));
	struct jx x = { .file = t_write("doc.json", "{}"), .err = e };
	int rc = dist_read(&x, obj, "", "x", r, NULL, d);

	json_decref(obj);
	return rc;
}

struct moment_case {
	const char *json;
	double mean, var; /* analytic, of the variable itself */
};

/* Sample mean within 5 standard errors, sample variance within 4%. */
static void moments(void)
{
	static const struct moment_case cases[] = {
		{ "0.25", 0.25, 0 },
		{ "{\"dist\": \"constant\", \"value\": 3}", 3, 0 },
		{ "{\"dist\": \"uniform\", \"min\": 2, \"max\": 5}", 3.5, 0.75 },
		{ "{\"dist\": \"exponential\", \"mean\": 5}", 5, 25 },
		{ "{\"dist\": \"normal\", \"mean\": 10, \"sd\": 2}", 10, 4 },
		{ "{\"dist\": \"lognormal\", \"mean\": 0.06, \"sd\": 0.015}", 0.06,
		  0.015 * 0.015 },
		{ "{\"dist\": \"gamma\", \"mean\": 0.06, \"cv\": 0.5}", 0.06,
		  0.03 * 0.03 },
		{ "{\"dist\": \"pareto\", \"xm\": 0.05, \"alpha\": 6}", 0.06,
		  0.05 * 0.05 * 6 / (25.0 * 4) },
	};
	const int n = 200000;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		gsl_rng *r = rng_new(1234, rng_stream_id("test/moments/%zu", c));
		struct dist d;
		struct err e;
		double s = 0, s2 = 0, m, v;

		if (parse(cases[c].json, JX_NONNEG, &d, &e) < 0) {
			CHECK_MSG(0, "%s: %s", cases[c].json, e.msg);
			rng_free(r);
			continue;
		}
		CHECK_NEAR(dist_mean(&d), cases[c].mean, 1e-12 * cases[c].mean);
		CHECK_NEAR(dist_var(&d), cases[c].var, 1e-9 * cases[c].var + 1e-15);
		for (int i = 0; i < n; i++) {
			double x = dist_sample(&d, r);

			s += x;
			s2 += x * x;
		}
		m = s / n;
		v = s2 / n - m * m;
		CHECK_MSG(fabs(m - cases[c].mean) <=
				  5 * sqrt(cases[c].var / n) + 1e-12,
			  "%s: sample mean %.6g, analytic %.6g", cases[c].json, m,
			  cases[c].mean);
		CHECK_MSG(fabs(v - cases[c].var) <= 0.04 * cases[c].var + 1e-12,
			  "%s: sample variance %.6g, analytic %.6g",
			  cases[c].json, v, cases[c].var);
		dist_release(&d);
		rng_free(r);
	}
}

static void empirical_file(void)
{
	const char *path = t_write("rtt.txt", "# measured RTTs\n0.05\n0.07\n"
				   "  0.09  \n\n0.11 # slow\n");
	char json[700];
	struct dist d;
	struct err e;
	gsl_rng *r = rng_new(3, 4);
	double s = 0;

	(void)path;
	snprintf(json, sizeof(json), "{\"dist\": \"empirical\", \"file\": "
		 "\"rtt.txt\"}");
	CHECK(parse(json, JX_POS, &d, &e) == 0);
	CHECK(d.n_samples == 4);
	CHECK_NEAR(dist_mean(&d), 0.08, 1e-15);
	CHECK_NEAR(dist_var(&d), 0.0005, 1e-15);
	for (int i = 0; i < 100000; i++) {
		double x = dist_sample(&d, r);

		CHECK(x == 0.05 || x == 0.07 || x == 0.09 || x == 0.11);
		s += x;
	}
	CHECK_NEAR(s / 100000, 0.08, 5 * sqrt(0.0005 / 100000));
	dist_release(&d);
	rng_free(r);
}

/* Normal draws are clamped into the variable's range. */
static void normal_clamped(void)
{
	struct dist d;
	struct err e;
	gsl_rng *r = rng_new(5, 6);
	int zeros = 0;

	CHECK(parse("{\"dist\": \"normal\", \"mean\": 0.01, \"sd\": 0.02}",
		    JX_NONNEG, &d, &e) == 0);
	for (int i = 0; i < 10000; i++) {
		double x = dist_sample(&d, r);

		CHECK(x >= 0);
		zeros += x == 0;
	}
	CHECK(zeros > 2000 && zeros < 4000); /* P(X < 0) = 0.31 */
	rng_free(r);
}

struct bad_case {
	const char *json, *want;
};

static void bad_distributions(void)
{
	static const struct bad_case cases[] = {
		{ "\"fast\"", "/x: expected a distribution object or a number "
			      ">= 0, got \"fast\"" },
		{ "-1", "expected a distribution object or a number >= 0, got -1" },
		{ "{\"dist\": \"weibull\"}", "/x/dist: expected one of \"constant\"" },
		{ "{\"dist\": \"exponential\"}",
		  "/x: missing required key \"mean\"" },
		{ "{\"dist\": \"exponential\", \"mean\": 1, \"sd\": 2}",
		  "/x/sd: unknown key \"sd\"" },
		{ "{\"dist\": \"uniform\", \"min\": 3, \"max\": 1}",
		  "/x: expected a uniform distribution whose min is at most its "
		  "max" },
		{ "{\"dist\": \"uniform\", \"min\": -3, \"max\": 1}",
		  "/x: expected a distribution whose draws are >= 0" },
		{ "{\"dist\": \"gamma\", \"mean\": 1, \"cv\": 0}",
		  "/x/cv: expected a number in [1e-06, 1e+06], got 0" },
		{ "{\"dist\": \"empirical\", \"file\": \"nope.txt\"}",
		  "/x: cannot read samples file" },
		{ "{\"dist\": \"empirical\", \"file\": \"bad.txt\"}",
		  "bad.txt:2: expected a number >= 0, got \"fast\"" },
		{ "{\"dist\": \"empirical\", \"file\": \"empty.txt\"}",
		  "empty.txt: no samples in the file" },
	};

	t_write("bad.txt", "0.1\nfast\n");
	t_write("empty.txt", "# nothing\n");
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct dist d;
		struct err e = { "" };

		CHECK_MSG(parse(cases[c].json, JX_NONNEG, &d, &e) < 0,
			  "%s was accepted", cases[c].json);
		CHECK_MSG(strstr(e.msg, cases[c].want), "%s: message \"%s\" "
			  "lacks \"%s\"", cases[c].json, e.msg, cases[c].want);
	}
}

static void streams(void)
{
	gsl_rng *a = rng_new(99, rng_stream_id("g/0/rtt"));
	gsl_rng *a2 = rng_new(99, rng_stream_id("g/0/rtt"));
	gsl_rng *b = rng_new(99, rng_stream_id("g/1/rtt"));
	gsl_rng *c = rng_new(100, rng_stream_id("g/0/rtt"));
	double alone[1000];
	int same_b = 0, same_c = 0, differ = 0;

	for (int i = 0; i < 1000; i++)
		alone[i] = gsl_rng_uniform(a);
	/* interleaving draws from other streams changes nothing in a2 */
	for (int i = 0; i < 1000; i++) {
		double x = gsl_rng_uniform(a2);

		differ += x != alone[i];
		same_b += gsl_rng_uniform(b) == alone[i];
		same_c += gsl_rng_uniform(c) == alone[i];
		gsl_rng_uniform(b);
	}
	CHECK(differ == 0);
	CHECK(same_b == 0 && same_c == 0);
	CHECK(rng_stream_id("g/%d/rtt", 0) == rng_stream_id("g/0/rtt"));
	CHECK(rng_stream_id("g/0/rtt") != rng_stream_id("g/0/len"));
	/* a fixed seed gives fixed numbers, on every machine */
	{
		gsl_rng *f = rng_new(1, 1);
		unsigned long first = gsl_rng_get(f);

		rng_free(f);
		f = rng_new(1, 1);
		CHECK(gsl_rng_get(f) == first);
		rng_free(f);
	}
	rng_free(a);
	rng_free(a2);
	rng_free(b);
	rng_free(c);
}

/* A stream kept in place draws what rng_new's generator for the same seed
 * and id draws, in every gsl_rng call, and owns no memory. */
static void stream_in_place(void)
{
	gsl_rng *a = rng_new(99, rng_stream_id("g/7/net"));
	struct rng_stream st;
	gsl_rng *b = rng_stream_init(&st, 99, rng_stream_id("g/7/net"));
	int differ = 0;

	CHECK(b == &st.gen && b->state == (void *)st.state);
	for (int i = 0; i < 1000; i++) {
		differ += gsl_rng_get(a) != gsl_rng_get(b);
		differ += gsl_rng_uniform(a) != gsl_rng_uniform(b);
		differ += gsl_ran_gaussian_ziggurat(a, 1) !=
			  gsl_ran_gaussian_ziggurat(b, 1);
	}
	CHECK(differ == 0);
	CHECK(rng_stream_init(&st, 99, rng_stream_id("g/8/net")) == b &&
	      gsl_rng_get(b) != gsl_rng_get(a));
	rng_free(a);
}

/* splitmix64 in pieces, each from rng_splitmix64_skip's state, is the
 * sequence drawn in turn (synth.c draws a model's weights so on every
 * CPU); a skip of 0 stays, and the known first value of seed 0 */
static void splitmix_in_pieces(void)
{
	uint64_t seq[1000], x = 0x5eed, z = 0;
	int differ = 0;

	for (int i = 0; i < 1000; i++)
		seq[i] = rng_splitmix64(&x);
	CHECK(x == rng_splitmix64_skip(0x5eed, 1000));
	for (int from = 0; from < 1000; from += 37) {
		uint64_t y = rng_splitmix64_skip(0x5eed, (uint64_t)from);

		for (int i = from; i < from + 37 && i < 1000; i++)
			differ += rng_splitmix64(&y) != seq[i];
	}
	CHECK(differ == 0);
	CHECK(rng_splitmix64_skip(42, 0) == 42);
	/* Vigna's splitmix64.c from state 0 */
	CHECK(rng_splitmix64(&z) == UINT64_C(0xe220a8397b1dcdaf));
}

const struct tcase rng_tests[] = {
	{ "rng: sample moments of every distribution", moments },
	{ "rng: empirical samples from a file", empirical_file },
	{ "rng: normal draws clamped to the range", normal_clamped },
	{ "rng: bad distributions name the pointer", bad_distributions },
	{ "rng: streams are independent and reproducible", streams },
	{ "rng: a stream in place draws as an allocated one", stream_in_place },
	{ "rng: splitmix64 drawn in pieces is the sequence in turn",
	  splitmix_in_pieces },
	{ 0 },
};
