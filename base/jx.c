/* jx.c: strict JSON readers with JSON-pointer messages.
 *
 * Readers never keep state: a struct jx only names the document and the
 * error sink, and each call gets the pointer of the object it reads from.
 * Defaults are inserted into the document (json_object_set_new) so that a
 * dump after reading is the resolved document. */
#include "jx.h"
#include "mem.h"
#include "fs.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

json_t *jx_load(const char *path, struct err *e)
{
	json_error_t je;
	struct stat st;
	json_t *v;
	FILE *f = fopen(path, "rb");

	if (!f) {
		err_set(e, "%s: cannot read: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		err_set(e, "%s: a folder, where a JSON file was expected", path);
		return NULL;
	}
	fs_skip_bom(f);
	v = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
	fclose(f);
	if (!v)
		err_set(e, "%s:%d:%d: invalid JSON: %s", path, je.line,
			je.column, je.text);
	return v;
}

char *jx_child(char *buf, const char *ptr, const char *key)
{
	size_t n = strlen(ptr);

	HS_ASSERT(n + 1 < JX_PTR_MAX);
	memcpy(buf, ptr, n);
	buf[n++] = '/';
	for (const char *k = key; *k && n + 3 < JX_PTR_MAX; k++) {
		if (*k == '~' || *k == '/') {
			buf[n++] = '~';
			buf[n++] = *k == '~' ? '0' : '1';
		} else {
			buf[n++] = *k;
		}
	}
	buf[n] = '\0';
	return buf;
}

char *jx_index(char *buf, const char *ptr, size_t i)
{
	char num[24];

	snprintf(num, sizeof(num), "%zu", i);
	return jx_child(buf, ptr, num);
}

/* The index of arr's first value equal to one before it, or 0 */
static size_t repeated(const json_t *arr)
{
	for (size_t i = 1; i < json_array_size(arr); i++)
		for (size_t j = 0; j < i; j++) {
			const json_t *a = json_array_get(arr, i);
			const json_t *b = json_array_get(arr, j);

			/* 4 and 4.0 are one number */
			if (json_is_number(a) && json_is_number(b)
				    ? json_number_value(a) == json_number_value(b)
				    : json_equal(a, b))
				return i;
		}
	return 0;
}

int jx_unique(struct jx *x, const json_t *arr, const char *ptr)
{
	size_t i = repeated(arr);
	char at[JX_PTR_MAX];

	return i ? jx_fail(x, jx_index(at, ptr, i), "a value not listed before",
			   json_array_get(arr, i)) : 0;
}

int jx_fail(struct jx *x, const char *ptr, const char *expected,
	    const json_t *got)
{
	char shown[80] = "nothing (the key is missing)";

	if (got) {
		/* 15 digits: a number as it was typed (0.1, not 17 digits'
		 * 0.10000000000000001) */
		char *s = json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT |
					  JSON_REAL_PRECISION(15));

		if (s && strlen(s) > 60)
			snprintf(shown, sizeof(shown), "%.57s...", s);
		else if (s)
			snprintf(shown, sizeof(shown), "%s", s);
		free(s);
	}
	return err_set(x->err, "%s: %s: expected %s, got %s", x->file,
		       *ptr ? ptr : "/", expected, shown);
}

int jx_object(struct jx *x, const json_t *v, const char *ptr,
	      const char *const keys[])
{
	const char *k;
	json_t *val;

	if (!json_is_object(v))
		return jx_fail(x, ptr, "an object", v);
	json_object_foreach((json_t *)v, k, val) {
		size_t i;
		char p[JX_PTR_MAX], known[512] = "";

		for (i = 0; keys[i]; i++)
			if (!strcmp(keys[i], k))
				break;
		if (keys[i])
			continue;
		for (i = 0; keys[i]; i++) {
			size_t n = strlen(known);

			snprintf(known + n, sizeof(known) - n, "%s\"%s\"",
				 i ? ", " : "", keys[i]);
		}
		return err_set(x->err, "%s: %s: unknown key \"%s\" (known: %s)",
			       x->file, jx_child(p, ptr, k), k, known);
	}
	return 0;
}

const char *jx_range_str(char *buf, struct jx_range r)
{
	if (isinf(r.hi) && isinf(r.lo))
		snprintf(buf, 64, "any value");
	else if (isinf(r.hi))
		snprintf(buf, 64, "%s %g", r.lo_open ? ">" : ">=", r.lo);
	else if (isinf(r.lo))
		snprintf(buf, 64, "%s %g", r.hi_open ? "<" : "<=", r.hi);
	else
		snprintf(buf, 64, "in %c%g, %g%c", r.lo_open ? '(' : '[', r.lo,
			 r.hi, r.hi_open ? ')' : ']');
	return buf;
}

bool jx_in_range(double v, struct jx_range r)
{
	if (isnan(v))
		return false;
	if (r.lo_open ? !(v > r.lo) : !(v >= r.lo))
		return false;
	return r.hi_open ? v < r.hi : v <= r.hi;
}

/* obj[key], inserting def_value (a new reference, or NULL) when absent.
 * Returns NULL, with the message, when the key is missing and required. */
static json_t *get(struct jx *x, json_t *obj, const char *ptr,
		   const char *key, json_t *def_value, char *p)
{
	json_t *v = json_object_get(obj, key);

	jx_child(p, ptr, key);
	if (v) {
		json_decref(def_value);
		return v;
	}
	if (!def_value) {
		err_set(x->err, "%s: %s: missing required key \"%s\"", x->file,
			ptr && *ptr ? ptr : "/", key);
		return NULL;
	}
	json_object_set_new(obj, key, def_value);
	return def_value;
}

int jx_num(struct jx *x, json_t *obj, const char *ptr, const char *key,
	   struct jx_range r, double def, double *out)
{
	char p[JX_PTR_MAX], want[80], rs[64];
	json_t *v = get(x, obj, ptr, key, isnan(def) ? NULL : json_real(def), p);

	if (!v)
		return -1;
	if (!json_is_number(v) || !jx_in_range(json_number_value(v), r)) {
		snprintf(want, sizeof(want), "a number %s", jx_range_str(rs, r));
		return jx_fail(x, p, want, v);
	}
	*out = json_number_value(v);
	return 0;
}

int jx_nums(struct jx *x, json_t *obj, const char *ptr, const char *key,
	    struct jx_range r, int order, double **out, size_t *n)
{
	static const char *const orders[] = { "", ", not less than the one "
		"before", ", greater than the one before" };
	char p[JX_PTR_MAX], ip[JX_PTR_MAX], want[128], rs[64];
	json_t *a = get(x, obj, ptr, key, NULL, p);

	*out = NULL;
	if (!a)
		return -1;
	if (!json_is_array(a) || json_array_size(a) == 0)
		return jx_fail(x, p, "a non-empty array of numbers", a);
	*n = json_array_size(a);
	*out = xcalloc(*n, sizeof(double));
	snprintf(want, sizeof(want), "a number %s%s", jx_range_str(rs, r),
		 orders[order < 0 ? 0 : order + 1]);
	for (size_t i = 0; i < *n; i++) {
		json_t *v = json_array_get(a, i);
		double d = json_number_value(v);

		if (!json_is_number(v) || !jx_in_range(d, r) ||
		    (i && order == 0 && d < (*out)[i - 1]) ||
		    (i && order > 0 && d <= (*out)[i - 1])) {
			free(*out);
			*out = NULL;
			return jx_fail(x, jx_index(ip, p, i), want, v);
		}
		(*out)[i] = d;
	}
	return 0;
}

int jx_int(struct jx *x, json_t *obj, const char *ptr, const char *key,
	   long long lo, long long hi, long long def, long long *out)
{
	char p[JX_PTR_MAX], want[96];
	json_t *v = get(x, obj, ptr, key,
			def == JX_REQUIRED_INT ? NULL : json_integer(def), p);
	double d;

	if (!v)
		return -1;
	d = json_is_number(v) ? json_number_value(v) : NAN;
	if (json_is_integer(v) ? (json_integer_value(v) < lo ||
				  json_integer_value(v) > hi)
			       : !(d == floor(d) && d >= (double)lo &&
				   d <= (double)hi && fabs(d) < 0x1p53)) {
		if (hi == LLONG_MAX)
			snprintf(want, sizeof(want), "an integer >= %lld", lo);
		else
			snprintf(want, sizeof(want), "an integer in [%lld, %lld]",
				 lo, hi);
		return jx_fail(x, p, want, v);
	}
	*out = json_is_integer(v) ? json_integer_value(v) : (long long)d;
	if (!json_is_integer(v)) /* 1e2: the resolved config says 100 */
		json_object_set_new(obj, key, json_integer(*out));
	return 0;
}

int jx_bool(struct jx *x, json_t *obj, const char *ptr, const char *key,
	    int def, bool *out)
{
	char p[JX_PTR_MAX];
	json_t *v = get(x, obj, ptr, key, def < 0 ? NULL : json_boolean(def), p);

	if (!v)
		return -1;
	if (!json_is_boolean(v))
		return jx_fail(x, p, "true or false", v);
	*out = json_is_true(v);
	return 0;
}

int jx_str(struct jx *x, json_t *obj, const char *ptr, const char *key,
	   const char *def, const char **out)
{
	char p[JX_PTR_MAX];
	json_t *v = get(x, obj, ptr, key, def ? json_string(def) : NULL, p);

	if (!v)
		return -1;
	if (!json_is_string(v))
		return jx_fail(x, p, "a string", v);
	*out = json_string_value(v);
	return 0;
}

int jx_enum(struct jx *x, json_t *obj, const char *ptr, const char *key,
	    const char *const names[], const char *def, int *out)
{
	char p[JX_PTR_MAX], want[512] = "one of ";
	json_t *v = get(x, obj, ptr, key, def ? json_string(def) : NULL, p);

	if (!v)
		return -1;
	for (int i = 0; names[i]; i++) {
		size_t n = strlen(want);

		if (json_is_string(v) && !strcmp(json_string_value(v), names[i])) {
			*out = i;
			return 0;
		}
		snprintf(want + n, sizeof(want) - n, "%s\"%s\"", i ? ", " : "",
			 names[i]);
	}
	return jx_fail(x, p, want, v);
}

char *jx_path(const struct jx *x, const char *path, char *buf, size_t n)
{
	const char *slash = strrchr(x->file, '/');
	char cwd[2048];

	if (path[0] == '/')
		snprintf(buf, n, "%s", path);
	else if (!getcwd(cwd, sizeof(cwd)))
		snprintf(buf, n, "%.*s%s%s", slash ? (int)(slash - x->file) : 0,
			 x->file, slash ? "/" : "", path);
	else if (x->file[0] == '/')
		snprintf(buf, n, "%.*s/%s", (int)(slash - x->file), x->file,
			 path);
	else
		snprintf(buf, n, "%s/%.*s%s%s", cwd,
			 slash ? (int)(slash - x->file) : 0, x->file,
			 slash ? "/" : "", path);
	return buf;
}

/* Copies the next reference token of ptr (after its '/') into tok,
 * unescaping ~1 and ~0. Returns the rest of ptr, or NULL when malformed. */
static const char *next_token(const char *ptr, char *tok, size_t n)
{
	size_t k = 0;

	if (*ptr != '/')
		return NULL;
	for (ptr++; *ptr && *ptr != '/'; ptr++) {
		char c = *ptr;

		if (c == '~') {
			if (ptr[1] != '0' && ptr[1] != '1')
				return NULL;
			c = *++ptr == '0' ? '~' : '/';
		}
		if (k + 1 >= n)
			return NULL;
		tok[k++] = c;
	}
	tok[k] = '\0';
	return ptr;
}

/* An array index token: digits only, no leading zero (RFC 6901: not
 * "+0", " 0" or "00", each another spelling of one place) */
static int array_index(const char *tok, size_t size, size_t *i)
{
	char *end;
	unsigned long long v;

	if (!*tok || (tok[0] == '0' && tok[1]) ||
	    strspn(tok, "0123456789") != strlen(tok))
		return -1;
	errno = 0;
	v = strtoull(tok, &end, 10);
	if (*end || errno || v >= size)
		return -1;
	*i = (size_t)v;
	return 0;
}

int jx_set(json_t *root, const char *ptr, const char *value_text,
	   char *where, struct err *e)
{
	json_error_t je;
	json_t *value = json_loads(value_text, JSON_DECODE_ANY |
				   JSON_REJECT_DUPLICATES, &je);
	json_t *cur = root;
	const char *rest = ptr, *at = ptr;
	char tok[JX_PTR_MAX], *end;

	/* not JSON: a bare word is a string, but a number JSON cannot hold
	 * (2^64, 1e400) or an object with a key twice is an error */
	if (!value && (isdigit((unsigned char)*value_text) ||
		       (strchr("+-.", *value_text) &&
			isdigit((unsigned char)value_text[1]))) &&
	    (strtod(value_text, &end), !*end))
		return err_set(e, "--set '%.200s': the number %.40s is out of range",
			       ptr, value_text);
	if (!value && strchr("{[", *value_text) && strstr(je.text, "duplicate"))
		return err_set(e, "--set '%.200s': %s", ptr, je.text);
	if (!value)
		value = json_string(value_text);
	if (!*ptr || *ptr != '/') {
		json_decref(value);
		return err_set(e, "--set '%.200s': expected a JSON pointer such as "
			       "/cloud/replicas", ptr);
	}
	if (where)
		snprintf(where, JX_PTR_MAX, "%s", ptr);
	while ((at = rest, rest = next_token(rest, tok, sizeof(tok)))) {
		bool last = *rest == '\0';
		size_t i;

		if (json_is_object(cur)) {
			json_t *next = json_object_get(cur, tok);

			if (last) {
				json_object_set_new(cur, tok, value);
				return 0;
			}
			if (!next) {
				next = json_object();
				json_object_set_new(cur, tok, next);
			}
			cur = next;
		} else if (json_is_array(cur)) {
			size_t n = json_array_size(cur);

			if (last && (!strcmp(tok, "-") ||
				     (array_index(tok, n + 1, &i) == 0 && i == n))) {
				json_array_append_new(cur, value);
				if (where)
					snprintf(where, JX_PTR_MAX, "%.*s/%zu",
						 (int)(at - ptr), ptr, n);
				return 0;
			}
			if (array_index(tok, n, &i) < 0)
				break;
			if (last) {
				json_array_set_new(cur, i, value);
				return 0;
			}
			cur = json_array_get(cur, i);
		} else {
			break;
		}
	}
	json_decref(value);
	/* the pointer cut to 200 bytes, so that the reason is never cut */
	if (!rest)
		return err_set(e, "--set '%.200s%s': not a JSON pointer: a '~' "
			       "is followed by 0 or 1 ('~0' is '~', '~1' is "
			       "'/'), and a key has fewer than %zu bytes", ptr,
			       strlen(ptr) > 200 ? "..." : "", sizeof(tok));
	return err_set(e, "--set '%.200s%s': the pointer does not name a place "
		       "in the config (at \"%.100s\": %s%.*s is %s)", ptr,
		       strlen(ptr) > 200 ? "..." : "", tok, at == ptr ? "the "
		       "config" : "", (int)(at - ptr > 100 ? 100 : at - ptr),
		       ptr, json_is_array(cur)
		       ? (tok[strspn(tok, "0123456789")] ? "an array: its items "
			  "are numbered from 0" : "an array of fewer items")
		       : json_is_string(cur) ? "a string"
		       : json_is_number(cur) ? "a number"
		       : json_is_boolean(cur) ? "true or false" : "null");
}

static char *dumps(const json_t *v, int digits)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_REAL_PRECISION(digits) |
					JSON_ENCODE_ANY);
	size_t n;

	HS_ASSERT(s != NULL);
	n = strlen(s);
	s = xrealloc(s, n + 2);
	s[n] = '\n';
	s[n + 1] = '\0';
	return s;
}

char *jx_dumps(const json_t *v)
{
	return dumps(v, 15);
}

/* Rewrites each real of the JSON text s (17 digits) in place with the
 * fewest digits, 15 or more, that read back to the same double:
 * 0.10000000000000001 is 0.1 again. Strings are left as they are. */
static void shortest_reals(char *s)
{
	char *w = s;

	for (const char *r = s; *r;) {
		size_t n;

		if (*r == '"') { /* a string, its escapes kept */
			*w++ = *r++;
			while (*r && *r != '"') {
				if (*r == '\\' && r[1])
					*w++ = *r++;
				*w++ = *r++;
			}
			if (*r)
				*w++ = *r++;
			continue;
		}
		n = strspn(r, "+-0123456789.eE");
		if (n && (isdigit((unsigned char)*r) || *r == '-') &&
		    (memchr(r, '.', n) || memchr(r, 'e', n) ||
		     memchr(r, 'E', n))) {
			char tok[40], out[40];
			double d;

			snprintf(tok, sizeof(tok), "%.*s", (int)n, r);
			d = strtod(tok, NULL);
			for (int p = 15; p <= 17; p++) {
				snprintf(out, sizeof(out), "%.*g", p, d);
				if (strtod(out, NULL) == d)
					break;
			}
			if (!strpbrk(out, ".eEni")) /* still a real: 2.0 */
				strcat(out, ".0");
			if (strlen(out) <= n) {
				memcpy(w, out, strlen(out));
				w += strlen(out);
				r += n;
				continue;
			}
		}
		if (!n)
			n = 1;
		memmove(w, r, n);
		w += n;
		r += n;
	}
	*w = '\0';
}

char *jx_dumps_exact(const json_t *v)
{
	char *s = dumps(v, 17);

	shortest_reals(s);
	return s;
}

int jx_replaceable(const char *path, const char *const *keys,
		   const char *line, bool replace, struct err *e)
{
	struct stat st;
	json_t *doc;
	const char *cmd;
	bool ours = false;

	if (fs_writable(path, e) < 0)
		return -1;
	/* the atomic write's rename would put a file where the link was */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		return err_set(e, "'%s' is a symbolic link: name the file it "
			       "points to (a link is not replaced)", path);
	if (stat(path, &st) < 0 || (S_ISREG(st.st_mode) && !st.st_size))
		return 0;
	if (S_ISREG(st.st_mode) && (doc = json_load_file(path, 0, NULL))) {
		cmd = json_string_value(jx_at(doc, "/provenance/command"));
		ours = cmd && !strncmp(cmd, "hybridspec ", 11);
		if (!ours && keys) { /* every member of keys */
			size_t i = 0;

			while (keys[i] && json_object_get(doc, keys[i]))
				i++;
			ours = i > 0 && !keys[i];
		}
		json_decref(doc);
	} else if (S_ISREG(st.st_mode) && line) {
		char *text = fs_slurp(path, NULL);
		size_t n = strlen(line);

		ours = text && !strncmp(text, line, n);
		free(text);
	}
	if (!ours)
		return err_set(e, "'%s' exists and is not a file hybridspec "
			       "wrote: refusing to replace it (remove it, or "
			       "write elsewhere)", path);
	return replace ? 0 : err_set(e, "'%s' exists: add --overwrite to "
				     "replace it, or write elsewhere", path);
}

int jx_save(const char *path, const json_t *v, struct err *e)
{
	char *text = jx_dumps(v);
	int rc = fs_write_atomic(path, text, e);

	free(text);
	return rc;
}

json_t *jx_at(json_t *root, const char *ptr)
{
	json_t *cur = root;
	char tok[JX_PTR_MAX];
	size_t i;

	while (cur && *ptr && (ptr = next_token(ptr, tok, sizeof(tok)))) {
		if (json_is_object(cur))
			cur = json_object_get(cur, tok);
		else if (json_is_array(cur) &&
			 array_index(tok, json_array_size(cur), &i) == 0)
			cur = json_array_get(cur, i);
		else
			return NULL;
	}
	return ptr ? cur : NULL;
}
