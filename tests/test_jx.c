/* test_jx.c: strict readers, JSON pointers and --set. */
#include "harness.h"

#include "jx.h"

#include <stdlib.h>
#include <string.h>

static void pointers(void)
{
	char b[JX_PTR_MAX];

	CHECK(!strcmp(jx_child(b, "", "cloud"), "/cloud"));
	CHECK(!strcmp(jx_child(b, "/a", "x/y~z"), "/a/x~1y~0z"));
	CHECK(!strcmp(jx_index(b, "/tenants", 12), "/tenants/12"));
}

static void readers(void)
{
	json_t *o = json_loads("{\"n\": 3, \"r\": 0.5, \"big\": 1e6, "
			       "\"s\": \"async\", \"f\": 2.5}", 0, NULL);
	static const char *const names[] = { "sync", "async", NULL };
	struct err e = { "" };
	struct jx x = { .file = "c.json", .err = &e };
	long long n;
	double r;
	int k;

	CHECK(jx_int(&x, o, "", "n", 1, 10, JX_REQUIRED_INT, &n) == 0 && n == 3);
	CHECK(jx_int(&x, o, "", "big", 1, LLONG_MAX, JX_REQUIRED_INT, &n) == 0 &&
	      n == 1000000);
	/* and the document holds it as the integer it is */
	CHECK(json_is_integer(json_object_get(o, "big")));
	CHECK(jx_int(&x, o, "", "f", 1, 10, JX_REQUIRED_INT, &n) < 0);
	CHECK(!strcmp(e.msg, "c.json: /f: expected an integer in [1, 10], "
		      "got 2.5"));
	CHECK(jx_num(&x, o, "", "r", JX_UNIT, JX_REQUIRED, &r) == 0 && r == 0.5);
	CHECK(jx_num(&x, o, "", "n", JX_UNIT, JX_REQUIRED, &r) < 0);
	CHECK(!strcmp(e.msg, "c.json: /n: expected a number in [0, 1], got 3"));
	CHECK(jx_enum(&x, o, "", "s", names, NULL, &k) == 0 && k == 1);
	CHECK(jx_num(&x, o, "", "missing", JX_POS, JX_REQUIRED, &r) < 0);
	CHECK(!strcmp(e.msg, "c.json: /: missing required key \"missing\""));
	/* a default is used and written into the document */
	CHECK(jx_num(&x, o, "", "d", JX_POS, 0.25, &r) == 0 && r == 0.25);
	CHECK(json_real_value(json_object_get(o, "d")) == 0.25);
	json_decref(o);
}

static void unknown_keys(void)
{
	json_t *o = json_loads("{\"replicas\": 1, \"replcas\": 2}", 0, NULL);
	static const char *const keys[] = { "replicas", "router", NULL };
	struct err e;
	struct jx x = { .file = "c.json", .err = &e };

	CHECK(jx_object(&x, o, "/cloud", keys) < 0);
	CHECK(!strcmp(e.msg, "c.json: /cloud/replcas: unknown key \"replcas\" "
		      "(known: \"replicas\", \"router\")"));
	json_decref(o);
}

static void set_values(void)
{
	json_t *o = json_loads("{\"a\": {\"b\": [1, {\"c\": 2}]}}", 0, NULL);
	struct err e;
	char *s;

	CHECK(jx_set(o, "/a/b/1/c", "5", NULL, &e) == 0);
	CHECK(jx_set(o, "/a/b/0", "{\"x\": true}", NULL, &e) == 0);
	CHECK(jx_set(o, "/a/name", "fast", NULL, &e) == 0);   /* bare word: string */
	CHECK(jx_set(o, "/new/deep", "0.5", NULL, &e) == 0);  /* objects made */
	s = json_dumps(o, JSON_COMPACT);
	CHECK_MSG(!strcmp(s, "{\"a\":{\"b\":[{\"x\":true},{\"c\":5}],"
			  "\"name\":\"fast\"},\"new\":{\"deep\":0.5}}"), "%s", s);
	free(s);
	/* the place that cannot hold the next key named, and what it is */
	CHECK(jx_set(o, "/a/b/7", "1", NULL, &e) < 0);
	CHECK_MSG(strstr(e.msg, "does not name a place in the config (at \"7\": "
			 "/a/b is an array of fewer items)"), "%s", e.msg);
	CHECK(jx_set(o, "/a/b/x", "1", NULL, &e) < 0);
	CHECK_MSG(strstr(e.msg, "/a/b is an array: its items are numbered from "
			 "0"), "%s", e.msg);
	/* an index is digits alone: "+1", " 1", "01" name no item (they
	 * had let a sweep vary one place under two names) */
	CHECK(jx_set(o, "/a/b/+1/c", "1", NULL, &e) < 0 &&
	      jx_set(o, "/a/b/ 1/c", "1", NULL, &e) < 0 &&
	      jx_set(o, "/a/b/01/c", "1", NULL, &e) < 0 &&
	      jx_set(o, "/a/b/1 /c", "1", NULL, &e) < 0);
	CHECK(jx_set(o, "a/b", "1", NULL, &e) < 0);
	CHECK(jx_set(o, "/a/b/1/c/d", "1", NULL, &e) < 0);
	CHECK_MSG(strstr(e.msg, "(at \"d\": /a/b/1/c is a number)"), "%s",
		  e.msg);
	/* a '~' that is no escape: said so, not blamed on a place */
	CHECK(jx_set(o, "/a/x~2y", "1", NULL, &e) < 0 &&
	      strstr(e.msg, "not a JSON pointer: a '~' is followed by 0 or 1"));
	json_decref(o);
}

/* The exact dump: each real in the fewest digits that read back to it,
 * a whole one still a real, strings untouched. */
static void exact_dump(void)
{
	json_t *o = json_pack("{s:f,s:s,s:f,s:f,s:f,s:i}", "a", 0.1, "b",
			      "0.10000000000000001", "c", 2.0, "d", 1e-300,
			      "e", 0.1 + 0.2, "f", 7);
	char *s = jx_dumps_exact(o);
	json_t *back = json_loads(s, 0, NULL);

	CHECK_MSG(strstr(s, "\"a\": 0.1,") && strstr(s, "\"c\": 2.0,") &&
		  strstr(s, "\"b\": \"0.10000000000000001\"") &&
		  strstr(s, "\"e\": 0.30000000000000004,") &&
		  strstr(s, "\"f\": 7"), "%s", s);
	CHECK(back && json_equal(back, o));
	json_decref(back);
	json_decref(o);
	free(s);
}

static void syntax_errors(void)
{
	struct err e;
	const char *p = t_write("bad.json", "{\n  \"seed\": 1,\n  \"x\": ]\n}\n");
	json_t *v = jx_load(p, &e);

	CHECK(v == NULL);
	CHECK_MSG(strstr(e.msg, "bad.json:3:") && strstr(e.msg, "invalid JSON"),
		  "%s", e.msg);
	CHECK(jx_load("no/such/file.json", &e) == NULL);
	CHECK(!strcmp(e.msg, "no/such/file.json: cannot read: No such file or "
		      "directory"));
	p = t_write("dup.json", "{\"a\": 1, \"a\": 2}");
	CHECK(jx_load(p, &e) == NULL && strstr(e.msg, "duplicate"));
}

const struct tcase jx_tests[] = {
	{ "jx: JSON pointers are escaped", pointers },
	{ "jx: typed readers, ranges and defaults", readers },
	{ "jx: unknown keys are errors", unknown_keys },
	{ "jx: --set writes at a pointer", set_values },
	{ "jx: syntax errors give line and column", syntax_errors },
	{ "jx: the exact dump's reals read back in the fewest digits",
	  exact_dump },
	{ 0 },
};
