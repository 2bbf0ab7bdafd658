/* eq.c: a sorted run and a small heap for the near future, over buckets.
 *
 * Every node has a bucket index b(t) = max(0, floor((t - base_s) x
 * inv_width_s)), a non-decreasing function of t. Invariant: the near future
 * (the run's pending part and the heap) holds exactly the nodes with b(t) <
 * heap_end; bucket j (heap_end <= j < n_buckets) holds, unsorted, those with
 * b(t) == j; far holds the rest. So every near node comes before every other
 * node (b(t1) < b(t2) implies t1 < t2), and nodes of equal time are never
 * split between near, a bucket and far. Buckets and far are chains of
 * chunks of EQ_CHUNK nodes from one arena with a free chain, so a push
 * writes one place, a bucket's memory goes back to the arena when it becomes
 * the run, and the arena is as large as the most nodes ever pending at once
 * asked (and a part-full chunk a bucket). A pop takes the lesser of the
 * run's head and the heap's top; a push costs O(1), or a heap push when it
 * lands in the near future. When the near future is empty the next non-empty
 * bucket becomes the run: its nodes are distributed over as many slices of
 * the bucket's width (a counting sort), then an insertion sort puts the few
 * that share a slice in order. When the buckets run out the far nodes are
 * spread over fresh buckets, as wide as the density of the earliest far
 * nodes asks for BUCKET_FILL nodes a bucket (estimated from a sample); far
 * nodes beyond MAX_BUCKETS_PER_FILL buckets per BUCKET_FILL nodes stay far.
 * An epoch takes at least the earliest 1/FRONT_PART of the far nodes into
 * buckets, so a node is moved at most about FRONT_PART times and, in the
 * usual case, once or twice; a pop costs a comparison and an index bump. If
 * the times bunch up, a bucket and so the run can hold many nodes: the
 * counting sort still spreads them, and a slice that holds more than CROWD
 * is sorted by qsort.
 *
 * Order: nodes compare as 128-bit integers (t_bits, ord): eq.h's
 * eq_node_lt. Times are >= 0, and the bits of a non-negative double order
 * as the double does, so one unsigned comparison orders by time, priority
 * (ord's top 6 bits), then insertion sequence (the next 34 bits); the low 24 bits name the node's
 * slot and never decide (sequences are unique). Heap: heap[i] <=
 * heap[4i+1..4i+4], placed so that the four children of a node start a
 * 64-byte line; pops move the hole to a leaf along the least children, then
 * sift the last node up. When the sequence reaches 2^34, every node is
 * renumbered 0..n-1 in order (which keeps every relative order).
 *
 * A node carries its event, so a pop reads one place. A slot (a number <
 * 2^24 - 1, reused from a stack of free ones) identifies a node for
 * eq_cancel; a posted node has NO_SLOT (2^24 - 1) and is never cancelled;
 * its generation is bumped when it is freed, and a handle is (generation <<
 * 24 | slot) + 1, so it matches only while its event is pending. Cancelling
 * only sets the low bit of the slot's state, beside its generation (so a pop
 * reads one word for both); the node is dropped when it is popped, and only
 * then is the slot freed. When more than half the nodes are cancelled they
 * are all swept out, so memory stays proportional to pending events.
 *
 * eq.h inlines the usual steps, which must keep to this layout: a pop of
 * the run's head (posted, or its slot not cancelled), and a post or a push
 * (with a free slot) into a bucket whose last chunk has room; the *_rest
 * functions here do every other case. */
#include "eq.h"

#include "err.h"
#include "mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* nodes before heap[0], so that children groups start a line */
#define ALIGN_PAD (64 / sizeof(struct eq_node) - 1)
#define SLOT_OF(node) ((uint32_t)((node).ord & EQ_SLOT_MASK))
#define NO_SLOT ((uint32_t)EQ_NO_SLOT) /* a posted node's */
#define BUCKET_FILL 128  /* nodes a bucket is sized for */
#define SAMPLE 512       /* far times sampled for the bucket width */
#define FRONT_PART 8     /* the width fits the earliest 1/FRONT_PART of them */
#define MAX_BUCKETS_PER_FILL 4 /* buckets at most per BUCKET_FILL nodes */
#define INSERTION_ONLY 12 /* shorter runs skip the counting sort */
#define CROWD 16         /* more nodes in a slice are sorted by qsort */
#define NIL UINT32_MAX   /* no chunk */

static inline double bits_time(uint64_t b)
{
	double t;

	memcpy(&t, &b, sizeof(t));
	return t;
}

static void vec_reserve(struct eq_vec *v, size_t need)
{
	if (need <= v->cap)
		return;
	v->cap = v->cap ? 2 * v->cap : 8;
	while (v->cap < need)
		v->cap *= 2;
	v->v = xrealloc(v->v, v->cap * sizeof(*v->v));
}

static inline __attribute__((always_inline)) void
vec_push(struct eq_vec *v, const struct eq_node *x)
{
	if (v->n == v->cap)
		vec_reserve(v, v->n + 1);
	v->v[v->n++] = *x;
}

static uint32_t chunk_alloc(struct eq *q)
{
	uint32_t c = q->free_chunk;

	if (c == NIL) {
		uint32_t old = q->chunks_cap;

		HS_ASSERT(old < UINT32_MAX / 2);
		q->chunks_cap = old ? 2 * old : 64;
		q->chunk = xrealloc(q->chunk, (size_t)q->chunks_cap * EQ_CHUNK *
					      sizeof(*q->chunk));
		q->chunk_next = xrealloc(q->chunk_next, (size_t)q->chunks_cap *
						       sizeof(*q->chunk_next));
		for (uint32_t k = old; k < q->chunks_cap; k++)
			q->chunk_next[k] = k + 1 < q->chunks_cap ? k + 1 : NIL;
		c = old;
	}
	q->free_chunk = q->chunk_next[c];
	return c;
}

static inline struct eq_node *chunk_nodes(const struct eq *q, uint32_t c)
{
	return &q->chunk[(size_t)c * EQ_CHUNK];
}

/* Appends a chunk to l, whose chunks are full (out of line: one push in
 * EQ_CHUNK needs it, and the others then need no registers saved). */
static __attribute__((noinline)) void list_grow(struct eq *q,
						struct eq_list *l)
{
	uint32_t c = chunk_alloc(q);

	if (l->n)
		q->chunk_next[l->tail] = c;
	else
		l->head = c;
	l->tail = c;
}

static inline __attribute__((always_inline)) void
list_push(struct eq *q, struct eq_list *l, const struct eq_node *x)
{
	uint32_t fill = l->n % EQ_CHUNK;

	if (fill == 0)
		list_grow(q, l);
	chunk_nodes(q, l->tail)[fill] = *x;
	l->n++;
}

/* Gives the chain of chunks head .. tail back to the arena. */
static void chain_free(struct eq *q, uint32_t head, uint32_t tail)
{
	q->chunk_next[tail] = q->free_chunk;
	q->free_chunk = head;
}

/* Gives l's chunks back to the arena. */
static void list_clear(struct eq *q, struct eq_list *l)
{
	if (l->n)
		chain_free(q, l->head, l->tail);
	l->n = 0;
}

/* A walk over a chain: each step yields a chunk (cur) and its nodes. */
struct walk {
	uint32_t cur, next, left;
};

static inline struct walk walk_of(const struct eq_list *l)
{
	return (struct walk){ .next = l->head, .left = l->n };
}

/* The next chunk's node count (0 at the end); *v its nodes. */
static inline uint32_t walk_step(const struct eq *q, struct walk *w,
				 struct eq_node **v)
{
	uint32_t k = w->left < EQ_CHUNK ? w->left : EQ_CHUNK;

	if (!k)
		return 0;
	w->cur = w->next;
	w->left -= k;
	if (w->left)
		w->next = q->chunk_next[w->cur];
	*v = chunk_nodes(q, w->cur);
	return k;
}

void eq_init(struct eq *q)
{
	*q = (struct eq){ .inv_width_s = 1, .free_chunk = NIL };
}

void eq_release(struct eq *q)
{
	free(q->bucket);
	free(q->chunk);
	free(q->chunk_next);
	free(q->run.v);
	free(q->scratch);
	free(q->heap_mem);
	free(q->slot_state);
	free(q->free_stack);
	eq_init(q);
}

static void reserve_heap(struct eq *q, size_t need)
{
	size_t cap = q->cap ? q->cap : 64, bytes;
	struct eq_node *heap;
	void *mem;

	if (need <= q->cap)
		return;
	while (cap < need)
		cap *= 2;
	bytes = (cap + ALIGN_PAD) * sizeof(struct eq_node);
	mem = xcalloc64(bytes);
	heap = (struct eq_node *)mem + ALIGN_PAD;
	if (q->n)
		memcpy(heap, q->heap, q->n * sizeof(*heap));
	free(q->heap_mem);
	q->heap_mem = mem;
	q->heap = heap;
	q->cap = cap;
}

/* A slot never used before (none is free). */
static __attribute__((noinline)) uint32_t new_slot(struct eq *q)
{
	if (q->nslots == q->slots_cap) {
		q->slots_cap = q->slots_cap ? 2 * q->slots_cap : 64;
		q->slot_state = xrealloc(q->slot_state, q->slots_cap *
						      sizeof(*q->slot_state));
		q->free_stack = xrealloc(q->free_stack,
					 q->slots_cap * sizeof(*q->free_stack));
	}
	q->slot_state[q->nslots] = 0;
	return q->nslots++;
}

static inline uint32_t alloc_slot(struct eq *q)
{
	return q->n_free ? q->free_stack[--q->n_free] : new_slot(q);
}

static void sift_up(struct eq_node *h, size_t i, const struct eq_node *k)
{
	while (i > 0) {
		size_t p = (i - 1) / 4;

		if (!eq_node_lt(k, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = *k;
}

/* The least child of i in h[0..n), or 0 if i is a leaf. */
static inline __attribute__((always_inline)) size_t
least_child(const struct eq_node *h, size_t n, size_t i)
{
	size_t c = 4 * i + 1, best = c;

	if (c + 3 < n) {
		size_t b1 = c + eq_node_lt(&h[c + 1], &h[c]);
		size_t b2 = c + 2 + eq_node_lt(&h[c + 3], &h[c + 2]);

		return eq_node_lt(&h[b2], &h[b1]) ? b2 : b1;
	}
	if (c >= n)
		return 0;
	for (size_t j = c + 1; j < n; j++)
		if (eq_node_lt(&h[j], &h[best]))
			best = j;
	return best;
}

/* Removes the root: the hole goes down to a leaf, the last node fills it. */
static void pop_root(struct eq *q)
{
	struct eq_node *h = q->heap;
	size_t n = --q->n, i = 0, c;

	if (n == 0)
		return;
	while ((c = least_child(h, n, i)) != 0) {
		h[i] = h[c];
		i = c;
	}
	sift_up(h, i, &h[n]);
}

/* h[0..n) made a heap, from its last parent, (n - 2) / 4, up; h may be
 * NULL when n is 0 (a heap never used). */
static void heapify(struct eq_node *h, size_t n)
{
	if (n < 2)
		return;
	for (size_t i = (n - 2) / 4 + 1; i-- > 0;) {
		struct eq_node k = h[i];
		size_t j = i, c;

		while ((c = least_child(h, n, j)) != 0 && eq_node_lt(&h[c], &k)) {
			h[j] = h[c];
			j = c;
		}
		h[j] = k;
	}
}

/* out of line, as a push seldom lands in the near future */
static __attribute__((noinline)) void
heap_push(struct eq *q, const struct eq_node *x)
{
	reserve_heap(q, q->n + 1);
	sift_up(q->heap, q->n++, x);
}

/* Puts x where the invariant says. For b >= 0, b < k exactly when
 * floor(b) < k, and (int32_t)b is floor(b) when b < 2^31 (as every bucket
 * and slice index is: below 2^24); a conversion to a signed integer is one
 * instruction, to size_t several. */
static inline __attribute__((always_inline)) void
route(struct eq *q, const struct eq_node *x)
{
	double b = (bits_time(x->t_bits) - q->base_s) * q->inv_width_s;

	b = b > 0 ? b : 0;
	if (!(b < (double)q->n_buckets))
		list_push(q, &q->far, x);
	else if (b < (double)q->heap_end)
		heap_push(q, x);
	else
		list_push(q, &q->bucket[(int32_t)b], x);
}

static int cmp_nodes(const void *a, const void *b)
{
	return eq_node_lt(b, a) - eq_node_lt(a, b);
}

/* The k-th least of s[0..m) (0-based, k < m), s reordered: Wirth's
 * selection (Hoare's partition around the k-th element, narrowed to the
 * part that holds k). */
static double select_nth(double *s, size_t m, size_t k)
{
	ptrdiff_t l = 0, r = (ptrdiff_t)m - 1, kk = (ptrdiff_t)k;

	while (l < r) {
		double x = s[kk];
		ptrdiff_t i = l, j = r;

		do {
			while (s[i] < x)
				i++;
			while (x < s[j])
				j--;
			if (i <= j) {
				double y = s[i];

				s[i++] = s[j];
				s[j--] = y;
			}
		} while (i <= j);
		if (j < kk)
			l = i;
		if (kk < i)
			r = j;
	}
	return s[kk];
}

/* The bucket width for n nodes whose times span [lo, hi]: wide enough that
 * the earliest 1/FRONT_PART of them fill buckets of about BUCKET_FILL each,
 * as far as the times s[0..m) of m of them, taken at a stride, tell. */
static double front_width(double *s, size_t m, size_t n, double lo,
			  double hi)
{
	double front, buckets;
	size_t j;

	if (n <= BUCKET_FILL)
		return hi - lo; /* one bucket */
	j = m / FRONT_PART;
	front = select_nth(s, m, j) - lo;
	if (!(front > 0)) /* the front is one instant: spread the whole span */
		return (hi - lo) / (double)(n / BUCKET_FILL + 1);
	buckets = (double)j / (double)m * (double)n / BUCKET_FILL;
	return front / (buckets > 1 ? buckets : 1);
}

/* Spreads the far nodes over fresh buckets (the old ones are all empty);
 * the nodes beyond the last bucket stay far. */
static void new_epoch(struct eq *q)
{
	struct eq_list old = q->far;
	double lo = INFINITY, hi = -INFINITY, width, span, s[SAMPLE];
	size_t nb_max = MAX_BUCKETS_PER_FILL * (old.n / BUCKET_FILL) + 2, nb;
	size_t m = old.n < SAMPLE ? old.n : SAMPLE, stride = old.n / m, i = 0;
	struct walk w = walk_of(&old);
	struct eq_node *v;
	uint32_t k;

	while ((k = walk_step(q, &w, &v)) != 0)
		for (uint32_t j = 0; j < k; j++, i++) {
			double t = bits_time(v[j].t_bits);

			lo = t < lo ? t : lo;
			hi = t > hi ? t : hi;
			if (i % stride == 0 && i / stride < m)
				s[i / stride] = t;
		}
	q->base_s = lo;
	width = front_width(s, m, old.n, lo, hi);
	if (!(width >= 1e-300))
		width = 1; /* all at one time: all in bucket 0 */
	q->inv_width_s = 1 / width;
	span = (hi - lo) * q->inv_width_s + 2; /* room for rounding at hi */
	nb = span < (double)nb_max ? (size_t)span : nb_max;
	if (nb > q->buckets_cap) {
		q->bucket = xrealloc(q->bucket, nb * sizeof(*q->bucket));
		memset(q->bucket + q->buckets_cap, 0,
		       (nb - q->buckets_cap) * sizeof(*q->bucket));
		q->buckets_cap = (uint32_t)nb;
	}
	q->n_buckets = (uint32_t)nb;
	q->heap_end = 0;
	q->far = (struct eq_list){ 0 };
	/* each old chunk goes back to the arena before its nodes are routed,
	 * so the buckets reuse it */
	w = walk_of(&old);
	while ((k = walk_step(q, &w, &v)) != 0) {
		struct eq_node copy[EQ_CHUNK];

		memcpy(copy, v, k * sizeof(*v));
		chain_free(q, w.cur, w.cur);
		for (uint32_t j = 0; j < k; j++)
			route(q, &copy[j]);
	}
}

/* Puts the n nodes of bucket lo_b into dst in slices of the bucket, as
 * many as there are nodes (a counting sort), and sorts by qsort a slice
 * that holds more than CROWD (times bunched within it). */
static void spread(struct eq *q, const struct eq_list *src, uint32_t lo_b,
		   struct eq_node *dst)
{
	size_t n = src->n, i = 0;
	double scale = (double)n * q->inv_width_s;
	double off = (q->base_s * q->inv_width_s + lo_b) * (double)n;
	struct walk w = walk_of(src);
	struct eq_node *v;
	uint32_t k, *at, *start, most = 0;

	if (2 * n + 1 > q->scratch_cap) {
		q->scratch_cap = 2 * (2 * n + 1);
		q->scratch = xrealloc(q->scratch,
				      q->scratch_cap * sizeof(*q->scratch));
	}
	at = q->scratch;
	start = q->scratch + n;
	memset(start, 0, (n + 1) * sizeof(*start));
	while ((k = walk_step(q, &w, &v)) != 0)
		for (uint32_t j = 0; j < k; j++, i++) {
			double u = bits_time(v[j].t_bits) * scale - off;
			size_t slice;

			u = u > 0 ? u : 0;
			slice = u < (double)(n - 1) ? (size_t)(int32_t)u
						    : n - 1;
			at[i] = (uint32_t)slice;
			if (++start[slice + 1] > most)
				most = start[slice + 1];
		}
	for (size_t s = 0; s < n; s++)
		start[s + 1] += start[s];
	w = walk_of(src);
	i = 0;
	while ((k = walk_step(q, &w, &v)) != 0)
		for (uint32_t j = 0; j < k; j++, i++)
			dst[start[at[i]]++] = v[j];
	/* slice s now ends at start[s] */
	for (size_t s = 0, lo = 0; most > CROWD && s < n; lo = start[s++])
		if (start[s] - lo > CROWD)
			qsort(dst + lo, start[s] - lo, sizeof(*dst), cmp_nodes);
}

/* Sorts the nodes of bucket lo_b into dst: spread over slices unless they
 * are few, then an insertion sort, which finds them nearly in order. */
static void sort_bucket(struct eq *q, const struct eq_list *src,
			uint32_t lo_b, struct eq_node *dst)
{
	size_t n = src->n;

	if (n > INSERTION_ONLY) {
		spread(q, src, lo_b, dst);
	} else {
		struct walk w = walk_of(src);
		struct eq_node *v;
		uint32_t k;
		size_t i = 0;

		while ((k = walk_step(q, &w, &v)) != 0)
			for (uint32_t j = 0; j < k; j++)
				dst[i++] = v[j];
	}
	for (size_t i = 1; i < n; i++) {
		struct eq_node x = dst[i];
		size_t j = i;

		for (; j > 0 && eq_node_lt(&x, &dst[j - 1]); j--)
			dst[j] = dst[j - 1];
		dst[j] = x;
	}
}

/* Takes the least near node into *x; false if the near future is empty. */
static inline __attribute__((always_inline)) bool
take_near(struct eq *q, struct eq_node *x)
{
	bool in_run = q->run_pos < q->run.n;

	if (q->n && (!in_run || eq_node_lt(&q->heap[0], &q->run.v[q->run_pos]))) {
		*x = q->heap[0];
		pop_root(q);
		return true;
	}
	if (!in_run)
		return false;
	*x = q->run.v[q->run_pos++];
	return true;
}

/* With the near future empty: makes the next non-empty bucket the run,
 * starting new epochs as needed. False if no node is left. */
static bool refill(struct eq *q)
{
	for (;;) {
		while (q->heap_end < q->n_buckets) {
			struct eq_list *b = &q->bucket[q->heap_end++];

			if (!b->n)
				continue;
			vec_reserve(&q->run, b->n);
			sort_bucket(q, b, q->heap_end - 1, q->run.v);
			q->run.n = b->n;
			q->run_pos = 0;
			list_clear(q, b);
			return true;
		}
		if (q->far.n == 0)
			return false;
		new_epoch(q);
	}
}

/* Keeps the nodes of l that keep says to, in their order. */
static void list_filter(struct eq *q, struct eq_list *l,
			bool (*keep)(struct eq *, struct eq_node *))
{
	struct walk w = walk_of(l);
	struct eq_node *v;
	uint32_t k, wc = l->head, wn = 0;

	while ((k = walk_step(q, &w, &v)) != 0)
		for (uint32_t j = 0; j < k; j++) {
			if (!keep(q, &v[j]))
				continue;
			if (wn && wn % EQ_CHUNK == 0)
				wc = q->chunk_next[wc];
			chunk_nodes(q, wc)[wn++ % EQ_CHUNK] = v[j];
		}
	if (wn == 0) {
		list_clear(q, l);
		return;
	}
	if (wc != l->tail) /* the chunks after wc go back */
		chain_free(q, q->chunk_next[wc], l->tail);
	l->tail = wc;
	l->n = wn;
}

/* Calls keep on every node's place; keep returns false to drop the node. */
static void filter_nodes(struct eq *q,
			 bool (*keep)(struct eq *, struct eq_node *))
{
	size_t m = 0;

	for (size_t i = 0; i < q->n; i++)
		if (keep(q, &q->heap[i]))
			q->heap[m++] = q->heap[i];
	q->n = m;
	heapify(q->heap, q->n);
	m = 0;
	for (size_t i = q->run_pos; i < q->run.n; i++)
		if (keep(q, &q->run.v[i]))
			q->run.v[m++] = q->run.v[i];
	q->run.n = m;
	q->run_pos = 0;
	for (size_t j = 0; j < q->n_buckets; j++)
		list_filter(q, &q->bucket[j], keep);
	list_filter(q, &q->far, keep);
}

static bool keep_pending(struct eq *q, struct eq_node *x)
{
	uint32_t s = SLOT_OF(*x);

	if (s == NO_SLOT || !(q->slot_state[s] & 1))
		return true;
	eq_slot_free(q, s);
	q->n_total--;
	return false;
}

/* Gives all nodes sequences 0..n-1 in their order. Moves them all to far,
 * sorted, so that the next pop starts a new epoch. */
static __attribute__((noinline)) void renumber(struct eq *q)
{
	const uint64_t keep = ~(((UINT64_C(1) << EQ_SEQ_BITS) - 1) << EQ_SLOT_BITS);
	struct eq_vec all = { .v = NULL };

	for (size_t i = 0; i < q->n; i++)
		vec_push(&all, &q->heap[i]);
	for (size_t i = q->run_pos; i < q->run.n; i++)
		vec_push(&all, &q->run.v[i]);
	q->run.n = q->run_pos = 0;
	for (size_t j = 0; j <= q->n_buckets; j++) {
		struct eq_list *l = j < q->n_buckets ? &q->bucket[j] : &q->far;
		struct walk w = walk_of(l);
		struct eq_node *v;
		uint32_t k;

		while ((k = walk_step(q, &w, &v)) != 0)
			for (uint32_t i = 0; i < k; i++)
				vec_push(&all, &v[i]);
		list_clear(q, l);
	}
	qsort(all.v, all.n, sizeof(*all.v), cmp_nodes);
	for (size_t i = 0; i < all.n; i++) {
		all.v[i].ord = (all.v[i].ord & keep) | (uint64_t)i << EQ_SLOT_BITS;
		list_push(q, &q->far, &all.v[i]);
	}
	q->n = 0;
	q->n_buckets = q->heap_end = 0;
	q->seq = all.n;
	free(all.v);
}

/* Puts ev at t_s with slot s (NO_SLOT: posted). */
static inline __attribute__((always_inline)) void
place(struct eq *q, double t_s, int prio, struct eq_event ev, uint32_t s)
{
	struct eq_node x;

	HS_ASSERT(t_s >= q->now_s && t_s < INFINITY);
	HS_ASSERT(prio >= 0 && prio <= EQ_PRIO_MAX);
	HS_ASSERT(q->n_total < EQ_PENDING_MAX);
	if (q->seq == UINT64_C(1) << EQ_SEQ_BITS)
		renumber(q);
	q->n_total++;
	eq_node_set(q, &x, t_s, prio, ev, s);
	route(q, &x);
}

uint64_t eq_push_rest(struct eq *q, double t_s, int prio, struct eq_event ev)
{
	uint32_t s = alloc_slot(q);

	place(q, t_s, prio, ev, s);
	return ((uint64_t)(q->slot_state[s] >> 1) << EQ_SLOT_BITS | s) + 1;
}

void eq_post_rest(struct eq *q, double t_s, int prio, struct eq_event ev)
{
	place(q, t_s, prio, ev, NO_SLOT);
}

bool eq_cancel(struct eq *q, uint64_t handle)
{
	uint32_t s = (uint32_t)((handle - 1) & EQ_SLOT_MASK);
	uint64_t gen = (handle - 1) >> EQ_SLOT_BITS;

	if (handle == EQ_NONE || s >= q->nslots || q->slot_state[s] != gen << 1)
		return false;
	q->slot_state[s] |= 1;
	if (++q->n_cancelled > 64 && q->n_cancelled > q->n_total / 2) {
		filter_nodes(q, keep_pending);
		q->n_cancelled = 0;
	}
	return true;
}

bool eq_pop_rest(struct eq *q, double *t_s, struct eq_event *ev)
{
	struct eq_node top;

	while (take_near(q, &top) || (refill(q) && take_near(q, &top))) {
		uint32_t s = SLOT_OF(top);

		q->n_total--;
		if (s != NO_SLOT) {
			bool cancelled = q->slot_state[s] & 1;

			eq_slot_free(q, s);
			if (cancelled) {
				q->n_cancelled--;
				continue;
			}
		}
		*t_s = q->now_s = bits_time(top.t_bits);
		*ev = top.ev;
		return true;
	}
	return false;
}
