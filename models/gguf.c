/* gguf.c: a cursor walks the image once; every read first checks that the
 * bytes are there. Keys, tensor names and string arrays are copied out or
 * indexed; values and tensor data stay in the image (borrowed). After a
 * successful parse every tensor's [data, data + bytes) lies inside the
 * image, past the header, and no two overlap. */
#define _DEFAULT_SOURCE /* MAP_* */
#include "gguf.h"

#include "mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_DEPTH 4 /* arrays of arrays of ... */

static const struct {
	const char *name;
	int size; /* bytes of a scalar; 0 for a string or an array */
} vtypes[] = {
	[GGUF_U8] = { "u8", 1 },     [GGUF_I8] = { "i8", 1 },
	[GGUF_U16] = { "u16", 2 },   [GGUF_I16] = { "i16", 2 },
	[GGUF_U32] = { "u32", 4 },   [GGUF_I32] = { "i32", 4 },
	[GGUF_F32] = { "f32", 4 },   [GGUF_BOOL] = { "bool", 1 },
	[GGUF_STRING] = { "string", 0 }, [GGUF_ARRAY] = { "array", 0 },
	[GGUF_U64] = { "u64", 8 },   [GGUF_I64] = { "i64", 8 },
	[GGUF_F64] = { "f64", 8 },
};

const char *gguf_vtype_name(enum gguf_vtype t)
{
	return (unsigned)t <= GGUF_F64 ? vtypes[t].name : "unknown";
}

struct cur {
	const uint8_t *p;
	size_t size, at;
	const char *name;
	struct err *e;
};

static int need(struct cur *c, uint64_t n, const char *what)
{
	if (n > c->size - c->at)
		return err_set(c->e, "%s: truncated at byte %zu: %s needs %llu "
			       "bytes, %zu are left", c->name, c->at, what,
			       (unsigned long long)n, c->size - c->at);
	return 0;
}

static int rd(struct cur *c, void *out, size_t n, const char *what)
{
	if (need(c, n, what) < 0)
		return -1;
	memcpy(out, c->p + c->at, n); /* the file and the host: little-endian */
	c->at += n;
	return 0;
}

static int rd_str(struct cur *c, struct gguf_str *s, const char *what)
{
	uint64_t n;

	if (rd(c, &n, 8, what) < 0 || need(c, n, what) < 0)
		return -1;
	s->s = (const char *)c->p + c->at;
	s->n = (size_t)n;
	c->at += (size_t)n;
	return 0;
}

/* A NUL-terminated copy of s, refused if it holds a NUL. */
char *gguf_str_dup(const struct gguf_str *s)
{
	char *d = xmalloc(s->n + 1);

	memcpy(d, s->s, s->n);
	d[s->n] = '\0';
	return d;
}

static char *str_dup(struct cur *c, const struct gguf_str *s, const char *what)
{
	if (memchr(s->s, '\0', s->n)) {
		err_set(c->e, "%s: %s holds a NUL byte", c->name, what);
		return NULL;
	}
	return gguf_str_dup(s);
}

/* An array of n elements of at least `bytes` each that the rest of the
 * file cannot hold (said without n x bytes, which may wrap). */
static int too_many(struct cur *c, uint64_t n, int bytes, const char *what)
{
	return err_set(c->e, "%s: %s: %llu elements of %d or more bytes cannot "
		       "fit in the %zu bytes left", c->name, what,
		       (unsigned long long)n, bytes, c->size - c->at);
}

/* Skips one value of type t, checking it; fills kv's string index for a
 * string or a flat array of strings when kv is given. */
static int value(struct cur *c, uint32_t t, int depth, struct gguf_kv *kv,
		 const char *key)
{
	char what[320];

	snprintf(what, sizeof(what), "metadata '%.256s'", key);
	if (t > GGUF_F64)
		return err_set(c->e, "%s: %s: unknown value type %u", c->name,
			       what, t);
	if (t == GGUF_STRING) {
		struct gguf_str s;

		if (rd_str(c, &s, what) < 0)
			return -1;
		if (kv) {
			kv->str = xmalloc(sizeof(*kv->str));
			kv->str[0] = s;
		}
		return 0;
	}
	if (t == GGUF_ARRAY) {
		uint32_t at;
		uint64_t n;

		if (depth >= GGUF_MAX_DEPTH)
			return err_set(c->e, "%s: %s: arrays nested deeper than %d",
				       c->name, what, GGUF_MAX_DEPTH);
		if (rd(c, &at, 4, what) < 0 || rd(c, &n, 8, what) < 0)
			return -1;
		if (at > GGUF_F64)
			return err_set(c->e, "%s: %s: array of unknown type %u",
				       c->name, what, at);
		if (kv) {
			kv->atype = at;
			kv->n = n;
			kv->data = c->p + c->at;
		}
		if (vtypes[at].size) {
			if (n > (c->size - c->at) / (uint64_t)vtypes[at].size)
				return too_many(c, n, vtypes[at].size, what);
			if (at == GGUF_BOOL)
				for (uint64_t i = 0; i < n; i++)
					if (c->p[c->at + i] > 1)
						return err_set(c->e, "%s: %s: element %llu is "
							       "bool %u, not 0 or 1", c->name,
							       what, (unsigned long long)i,
							       c->p[c->at + i]);
			c->at += (size_t)n * (size_t)vtypes[at].size;
			return 0;
		}
		/* strings and arrays take at least 8 bytes each */
		if (n > (c->size - c->at) / 8)
			return too_many(c, n, 8, what);
		if (kv && at == GGUF_STRING)
			kv->str = xcalloc((size_t)n + 1, sizeof(*kv->str));
		for (uint64_t i = 0; i < n; i++) {
			if (at == GGUF_STRING && kv) {
				if (rd_str(c, &kv->str[i], what) < 0)
					return -1;
			} else if (value(c, at, depth + 1, NULL, key) < 0) {
				return -1;
			}
		}
		return 0;
	}
	if (kv)
		kv->data = c->p + c->at;
	if (need(c, (uint64_t)vtypes[t].size, what) < 0)
		return -1;
	if (t == GGUF_BOOL && c->p[c->at] > 1)
		return err_set(c->e, "%s: %s: bool %u, not 0 or 1", c->name, what,
			       c->p[c->at]);
	c->at += (size_t)vtypes[t].size;
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct gguf_kv *)a)->key,
		      ((const struct gguf_kv *)b)->key);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp((*(const struct gguf_tensor *const *)a)->name,
		      (*(const struct gguf_tensor *const *)b)->name);
}

static int cmp_data(const void *a, const void *b)
{
	const uint8_t *x = (*(const struct gguf_tensor *const *)a)->data;
	const uint8_t *y = (*(const struct gguf_tensor *const *)b)->data;

	return (x > y) - (x < y);
}

static int metadata(struct gguf *g, struct cur *c)
{
	const struct gguf_kv *al;

	for (long i = 0; i < g->n_kv; i++) {
		struct gguf_kv *kv = &g->kv[i];
		struct gguf_str key;
		uint32_t t;
		char what[64];

		snprintf(what, sizeof(what), "the key of metadata %ld", i);
		if (rd_str(c, &key, what) < 0 || !(kv->key = str_dup(c, &key, what)))
			return -1;
		kv->n = 1;
		if (rd(c, &t, 4, kv->key) < 0 || value(c, t, 0, kv, kv->key) < 0)
			return -1;
		kv->type = t;
	}
	{ /* sorted for gguf_get; duplicates are side by side */
		struct gguf_kv *s = xmalloc(sizeof(*s) * (size_t)(g->n_kv + 1));

		memcpy(s, g->kv, sizeof(*s) * (size_t)g->n_kv);
		qsort(s, (size_t)g->n_kv, sizeof(*s), cmp_key);
		for (long i = 1; i < g->n_kv; i++)
			if (!strcmp(s[i].key, s[i - 1].key)) {
				err_set(c->e, "%s: metadata '%.256s' appears twice",
					c->name, s[i].key);
				free(s);
				return -1;
			}
		memcpy(g->kv, s, sizeof(*s) * (size_t)g->n_kv);
		free(s);
	}
	g->alignment = GGUF_DEFAULT_ALIGNMENT;
	if ((al = gguf_get(g, "general.alignment"))) {
		uint32_t a;

		if (al->type != GGUF_U32)
			return err_set(c->e, "%s: metadata 'general.alignment': "
				       "expected u32, got %s", c->name,
				       gguf_vtype_name(al->type));
		memcpy(&a, al->data, 4);
		if (a == 0 || (a & (a - 1)))
			return err_set(c->e, "%s: metadata 'general.alignment': "
				       "expected a power of two, got %u", c->name, a);
		g->alignment = a;
	}
	return 0;
}

/* The tensor infos; offsets are checked once the data's start is known. */
static int infos(struct gguf *g, struct cur *c, uint64_t *off)
{
	for (long i = 0; i < g->n_t; i++) {
		struct gguf_tensor *t = &g->t[i];
		struct gguf_str name;
		uint32_t nd, type;
		uint64_t elems = 1;
		char what[64];

		snprintf(what, sizeof(what), "the name of tensor %ld", i);
		if (rd_str(c, &name, what) < 0 || !(t->name = str_dup(c, &name, what)))
			return -1;
		if (rd(c, &nd, 4, t->name) < 0)
			return -1;
		if (nd < 1 || nd > 4)
			return err_set(c->e, "%s: tensor '%.256s': %u dimensions, "
				       "expected 1 to 4", c->name, t->name, nd);
		t->n_dims = (int)nd;
		for (int d = 0; d < 4; d++)
			t->ne[d] = 1;
		for (uint32_t d = 0; d < nd; d++) {
			uint64_t ne;

			if (rd(c, &ne, 8, t->name) < 0)
				return -1;
			if (ne < 1 || ne > ((uint64_t)1 << 62) / elems)
				return err_set(c->e, "%s: tensor '%.256s': dimension %u "
					       "is %llu (%s)", c->name, t->name, d,
					       (unsigned long long)ne,
					       ne < 1 ? "expected >= 1"
						      : "the tensor overflows");
			t->ne[d] = (int64_t)ne;
			elems *= ne;
		}
		if (rd(c, &type, 4, t->name) < 0 || rd(c, &off[i], 8, t->name) < 0)
			return -1;
		if (!(t->type = ggq_find(type)))
			return err_set(c->e, "%s: tensor '%.256s': ggml type %u is "
				       "not one this reader knows (f32, f16, bf16, "
				       "q4_0, q4_1, q5_0, q5_1, q8_0, q4_k, q5_k, "
				       "q6_k)", c->name, t->name, type);
		if (t->ne[0] % t->type->block)
			return err_set(c->e, "%s: tensor '%.256s': a row of %lld is "
				       "not a whole number of %s blocks of %d",
				       c->name, t->name, (long long)t->ne[0],
				       t->type->name, t->type->block);
		{ /* rows x row bytes, refused before it could overflow */
			size_t rb = ggq_row_bytes(t->type, t->ne[0]);
			uint64_t rows = elems / (uint64_t)t->ne[0];

			if (rb > c->size || rows > c->size / rb)
				return err_set(c->e, "%s: tensor '%.256s': %llu rows of "
					       "%zu bytes cannot fit in the file (%zu "
					       "bytes)", c->name, t->name,
					       (unsigned long long)rows, rb, c->size);
			t->bytes = rb * (size_t)rows;
		}
	}
	return 0;
}

/* Places the tensors in the data section and checks they fit and do not
 * overlap; no two tensors share a name. */
static int place(struct gguf *g, struct cur *c, const uint64_t *off)
{
	size_t start = (c->at + g->alignment - 1) / g->alignment * g->alignment;
	struct gguf_tensor **s = xmalloc(sizeof(*s) * (size_t)(g->n_t + 1));
	int rc = -1;

	if (start > c->size && g->n_t > 0) {
		err_set(c->e, "%s: truncated: the data section would start at "
			"byte %zu of %zu", c->name, start, c->size);
		goto out;
	}
	for (long i = 0; i < g->n_t; i++) {
		struct gguf_tensor *t = &g->t[i];

		if (off[i] % g->alignment) {
			err_set(c->e, "%s: tensor '%.256s': offset %llu is not a "
				"multiple of the alignment %u", c->name, t->name,
				(unsigned long long)off[i], g->alignment);
			goto out;
		}
		if (off[i] > c->size - start || t->bytes > c->size - start - off[i]) {
			err_set(c->e, "%s: tensor '%.256s': bytes %llu..%llu of the "
				"data lie outside the file (%zu bytes of data)",
				c->name, t->name, (unsigned long long)off[i],
				(unsigned long long)(off[i] + t->bytes), c->size - start);
			goto out;
		}
		t->data = c->p + start + off[i];
		s[i] = t;
	}
	qsort(s, (size_t)g->n_t, sizeof(*s), cmp_name);
	for (long i = 1; i < g->n_t; i++)
		if (!strcmp(s[i]->name, s[i - 1]->name)) {
			err_set(c->e, "%s: tensor '%.256s' appears twice", c->name,
				s[i]->name);
			goto out;
		}
	qsort(s, (size_t)g->n_t, sizeof(*s), cmp_data);
	for (long i = 1; i < g->n_t; i++)
		if (s[i - 1]->data + s[i - 1]->bytes > s[i]->data) {
			err_set(c->e, "%s: tensors '%.256s' and '%.256s' overlap",
				c->name, s[i - 1]->name, s[i]->name);
			goto out;
		}
	rc = 0;
out:
	free(s);
	return rc;
}

int gguf_parse(struct gguf *g, const uint8_t *image, size_t size,
	       const char *name, struct err *e)
{
	struct cur c = { image, size, 0, name, e };
	uint64_t nt, nkv, *off = NULL;
	char magic[4];

	memset(g, 0, sizeof(*g));
	g->name = xstrdup(name);
	g->image = image;
	g->size = size;
	if (rd(&c, magic, 4, "the magic") < 0)
		goto fail;
	if (memcmp(magic, "GGUF", 4)) {
		err_set(e, "%s: not a GGUF file (no \"GGUF\" magic)", name);
		goto fail;
	}
	if (rd(&c, &g->version, 4, "the version") < 0)
		goto fail;
	if (g->version != 2 && g->version != 3) {
		err_set(e, "%s: GGUF version %u%s; this reader takes 2 and 3",
			name, g->version,
			g->version > 0xFFFF ? " (a big-endian file?)" : "");
		goto fail;
	}
	if (rd(&c, &nt, 8, "the tensor count") < 0 ||
	    rd(&c, &nkv, 8, "the metadata count") < 0)
		goto fail;
	/* a metadata entry takes at least 13 bytes, a tensor info 28 */
	if (nkv > size / 13 || nt > size / 28) {
		err_set(e, "%s: %llu metadata and %llu tensors cannot fit in %zu "
			"bytes", name, (unsigned long long)nkv,
			(unsigned long long)nt, size);
		goto fail;
	}
	g->n_kv = (long)nkv;
	g->n_t = (long)nt;
	g->kv = xcalloc((size_t)nkv + 1, sizeof(*g->kv));
	g->t = xcalloc((size_t)nt + 1, sizeof(*g->t));
	off = xcalloc((size_t)nt + 1, sizeof(*off));
	if (metadata(g, &c) < 0 || infos(g, &c, off) < 0 || place(g, &c, off) < 0)
		goto fail;
	free(off);
	return 0;
fail:
	free(off);
	gguf_release(g);
	return -1;
}

int gguf_open(struct gguf *g, const char *path, struct err *e)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	void *map;

	memset(g, 0, sizeof(*g));
	if (fd < 0)
		return err_set(e, "%s: cannot read: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return err_set(e, "%s: not a regular, non-empty file", path);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return err_set(e, "%s: cannot map: %s", path, strerror(errno));
	if (gguf_parse(g, map, (size_t)st.st_size, path, e) < 0) {
		munmap(map, (size_t)st.st_size);
		return -1;
	}
	g->map = map;
	return 0;
}

void gguf_release(struct gguf *g)
{
	for (long i = 0; g->kv && i < g->n_kv; i++) {
		free(g->kv[i].key);
		free(g->kv[i].str);
	}
	for (long i = 0; g->t && i < g->n_t; i++)
		free(g->t[i].name);
	free(g->kv);
	free(g->t);
	free(g->name);
	if (g->map)
		munmap(g->map, g->size);
	memset(g, 0, sizeof(*g));
}

const struct gguf_kv *gguf_get(const struct gguf *g, const char *key)
{
	long lo = 0, hi = g->n_kv - 1;

	while (lo <= hi) {
		long mid = (lo + hi) / 2;
		int c = strcmp(g->kv[mid].key, key);

		if (!c)
			return &g->kv[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

static const struct gguf_kv *want(const struct gguf *g, const char *key,
				  const char *expected, struct err *e)
{
	const struct gguf_kv *kv = gguf_get(g, key);

	if (!kv)
		err_set(e, "%s: metadata '%s' is missing (expected %s)", g->name,
			key, expected);
	return kv;
}

static int wrong(const struct gguf *g, const struct gguf_kv *kv,
		 const char *expected, struct err *e)
{
	return err_set(e, "%s: metadata '%s': expected %s, got %s%s", g->name,
		       kv->key, expected, kv->type == GGUF_ARRAY ? "an array of " : "",
		       gguf_vtype_name(kv->type == GGUF_ARRAY ? kv->atype : kv->type));
}

/* A scalar of a numeric type as a double, and as an exact integer. */
static double num_at(enum gguf_vtype t, const uint8_t *p, int64_t *iv)
{
	union {
		uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32;
		int32_t i32; float f32; uint64_t u64; int64_t i64; double f64;
	} u;

	memcpy(&u, p, (size_t)vtypes[t].size);
	switch (t) {
	case GGUF_U8: case GGUF_BOOL: *iv = u.u8; break;
	case GGUF_I8: *iv = u.i8; break;
	case GGUF_U16: *iv = u.u16; break;
	case GGUF_I16: *iv = u.i16; break;
	case GGUF_U32: *iv = u.u32; break;
	case GGUF_I32: *iv = u.i32; break;
	case GGUF_U64: *iv = u.u64 > INT64_MAX ? INT64_MAX : (int64_t)u.u64;
		return (double)u.u64;
	case GGUF_I64: *iv = u.i64; break;
	case GGUF_F32: *iv = 0; return u.f32;
	case GGUF_F64: *iv = 0; return u.f64;
	case GGUF_STRING: case GGUF_ARRAY: HS_ASSERT(!"not a number");
	}
	return (double)*iv;
}

static int is_int(enum gguf_vtype t)
{
	return t == GGUF_U8 || t == GGUF_I8 || t == GGUF_U16 || t == GGUF_I16 ||
	       t == GGUF_U32 || t == GGUF_I32 || t == GGUF_U64 || t == GGUF_I64;
}

int gguf_int(const struct gguf *g, const char *key, int64_t *v, struct err *e)
{
	const struct gguf_kv *kv = want(g, key, "an integer", e);

	if (!kv)
		return -1;
	if (!is_int(kv->type))
		return wrong(g, kv, "an integer", e);
	num_at(kv->type, kv->data, v);
	return 0;
}

int gguf_float(const struct gguf *g, const char *key, double *v, struct err *e)
{
	const struct gguf_kv *kv = want(g, key, "a float", e);
	int64_t iv;

	if (!kv)
		return -1;
	if (kv->type != GGUF_F32 && kv->type != GGUF_F64)
		return wrong(g, kv, "f32 or f64", e);
	*v = num_at(kv->type, kv->data, &iv);
	return 0;
}

int gguf_bool(const struct gguf *g, const char *key, int *v, struct err *e)
{
	const struct gguf_kv *kv = want(g, key, "a bool", e);

	if (!kv)
		return -1;
	if (kv->type != GGUF_BOOL)
		return wrong(g, kv, "bool", e);
	*v = kv->data[0];
	return 0;
}

int gguf_string(const struct gguf *g, const char *key, struct gguf_str *v,
		struct err *e)
{
	const struct gguf_kv *kv = want(g, key, "a string", e);

	if (!kv)
		return -1;
	if (kv->type != GGUF_STRING)
		return wrong(g, kv, "string", e);
	*v = kv->str[0];
	return 0;
}

const struct gguf_kv *gguf_array(const struct gguf *g, const char *key,
				 enum gguf_vtype t, long n, struct err *e)
{
	char expected[64];
	const struct gguf_kv *kv;

	snprintf(expected, sizeof(expected), "an array of %s", gguf_vtype_name(t));
	if (!(kv = want(g, key, expected, e)))
		return NULL;
	if (kv->type != GGUF_ARRAY || kv->atype != t) {
		wrong(g, kv, expected, e);
		return NULL;
	}
	if (n >= 0 && kv->n != (uint64_t)n) {
		err_set(e, "%s: metadata '%s': expected %ld elements, got %llu",
			g->name, key, n, (unsigned long long)kv->n);
		return NULL;
	}
	return kv;
}

double gguf_arr_num(const struct gguf_kv *kv, uint64_t i)
{
	int64_t iv;

	HS_ASSERT(kv->type == GGUF_ARRAY && vtypes[kv->atype].size && i < kv->n);
	return num_at(kv->atype, kv->data + i * (uint64_t)vtypes[kv->atype].size,
		      &iv);
}

const struct gguf_tensor *gguf_tensor(const struct gguf *g, const char *name)
{
	for (long i = 0; i < g->n_t; i++)
		if (!strcmp(g->t[i].name, name))
			return &g->t[i];
	return NULL;
}

float *gguf_tensor_f32(const struct gguf_tensor *t)
{
	size_t elems = t->bytes / (size_t)t->type->bytes * (size_t)t->type->block;
	float *y = xmalloc(sizeof(float) * (elems ? elems : 1));

	t->type->dequant(t->data, y, (long)elems);
	return y;
}
