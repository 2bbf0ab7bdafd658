/* eq.c: a small 4-ary heap for the near future over time buckets.
 *
 * Every node has a bucket index b(t) = floor((t - base_s) x inv_width_s), a
 * non-decreasing function of t. Invariant: the heap holds exactly the nodes
 * with b(t) < heap_end; bucket j (heap_end <= j < n_buckets) holds, unsorted,
 * those with b(t) == j; far holds the rest. So every heap node comes before
 * every other node (b(t1) < b(t2) implies t1 < t2), and nodes of equal time
 * always share a place. A push costs O(1), or a heap push when it lands in the
 * near future. When the heap runs dry the next non-empty bucket is heapified
 * into it (O(k)), and when the buckets run out the far nodes are spread over
 * fresh buckets of about BUCKET_FILL nodes each: every node is moved O(1)
 * times, and pops work on a heap of about BUCKET_FILL nodes, which stays in
 * the first-level cache. If the times bunch up, a bucket and so the heap can
 * hold many nodes: then it is an ordinary O(log n) heap.
 *
 * Heap: heap[i] <= heap[4i+1..4i+4] as 128-bit integers (t_bits, ord). Times
 * are >= 0, and the bits of a non-negative double order as the double does,
 * so one unsigned comparison orders by time, priority (ord's top 6 bits),
 * then insertion sequence (the next 34 bits); the low 24 bits name the slot
 * that holds the payload and never decide (sequences are unique). The array
 * is placed so that the four children of a node share one 64-byte line. Pops
 * move the hole to a leaf along the least children, then sift the last node
 * up. When the sequence reaches 2^34, every node is renumbered 0..n-1 in
 * order (which keeps every relative order).
 *
 * Nodes are their 16-byte keys alone, so that the four children of a node
 * fill one 64-byte line and a move is one 16-byte copy; the payload waits
 * in its slot's place in `payload`, read once when the node is popped. A
 * slot (a number < 2^24, reused from a stack of free ones) identifies a node
 * for eq_cancel; its generation is bumped when it is freed, and a handle is
 * (generation << 24 | slot) + 1, so it matches only while its event is
 * pending. Cancelling only sets the slot's bit in `cancelled`; the node is
 * dropped when it reaches the top, and only then is the slot freed. When more than half the nodes are cancelled they are all
 * swept out, so memory stays proportional to pending events. The bitmaps are
 * small enough (12.5 KB for 10^5 events) to stay in cache. */
#include "eq.h"

#include "err.h"
#include "mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN_PAD 3 /* nodes before heap[0], so children groups align */
#define SLOT_BITS 24
#define SEQ_BITS 34
#define PRIO_SHIFT (SLOT_BITS + SEQ_BITS)
#define SLOT_OF(node) ((uint32_t)((node).ord & ((1u << SLOT_BITS) - 1)))
#define BUCKET_FILL 32

typedef unsigned __int128 u128;

static inline u128 key(const struct eq_node *a)
{
	return (u128)a->t_bits << 64 | a->ord;
}

static inline bool node_lt(const struct eq_node *a, const struct eq_node *b)
{
	return key(a) < key(b);
}

static inline uint64_t time_bits(double t_s)
{
	uint64_t b;

	t_s += 0.0; /* -0.0 becomes +0.0 */
	memcpy(&b, &t_s, sizeof(b));
	return b;
}

static inline double bits_time(uint64_t b)
{
	double t;

	memcpy(&t, &b, sizeof(t));
	return t;
}

static inline __attribute__((always_inline)) void
vec_push(struct eq_vec *v, struct eq_node x)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 16;
		v->v = xrealloc(v->v, v->cap * sizeof(*v->v));
	}
	v->v[v->n++] = x;
}

static inline bool bit(const uint64_t *bits, uint32_t i)
{
	return bits[i / 64] >> (i % 64) & 1;
}

static inline void set_bit(uint64_t *bits, uint32_t i, bool on)
{
	uint64_t m = UINT64_C(1) << (i % 64);

	bits[i / 64] = on ? bits[i / 64] | m : bits[i / 64] & ~m;
}

void eq_init(struct eq *q)
{
	*q = (struct eq){ .width_s = 1, .inv_width_s = 1 };
}

void eq_release(struct eq *q)
{
	for (size_t j = 0; j < q->buckets_cap; j++)
		free(q->bucket[j].v);
	free(q->bucket);
	free(q->far.v);
	free(q->heap_mem);
	free(q->payload);
	free(q->slot_gen);
	free(q->cancelled);
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

static uint32_t alloc_slot(struct eq *q)
{
	if (q->n_free)
		return q->free_stack[--q->n_free];
	if (q->nslots == q->slots_cap) {
		size_t old_words = (q->slots_cap + 63) / 64, words;

		q->slots_cap = q->slots_cap ? 2 * q->slots_cap : 64;
		words = (q->slots_cap + 63) / 64;
		q->slot_gen = xrealloc(q->slot_gen,
				       q->slots_cap * sizeof(*q->slot_gen));
		q->payload = xrealloc(q->payload,
				      q->slots_cap * sizeof(*q->payload));
		q->free_stack = xrealloc(q->free_stack,
					 q->slots_cap * sizeof(*q->free_stack));
		q->cancelled = xrealloc(q->cancelled, words * sizeof(uint64_t));
		memset(q->cancelled + old_words, 0,
		       (words - old_words) * sizeof(uint64_t));
	}
	q->slot_gen[q->nslots] = 0;
	return q->nslots++;
}

static void free_slot(struct eq *q, uint32_t s, bool was_cancelled)
{
	if (was_cancelled)
		set_bit(q->cancelled, s, false);
	q->slot_gen[s]++;
	q->free_stack[q->n_free++] = s;
}

static void sift_up(struct eq_node *h, size_t i, struct eq_node k)
{
	while (i > 0) {
		size_t p = (i - 1) / 4;

		if (!node_lt(&k, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = k;
}

/* The least child of i in h[0..n), or 0 if i is a leaf. */
static inline __attribute__((always_inline)) size_t
least_child(const struct eq_node *h, size_t n, size_t i)
{
	size_t c = 4 * i + 1, best = c;

	if (c + 3 < n) {
		size_t b1 = c + node_lt(&h[c + 1], &h[c]);
		size_t b2 = c + 2 + node_lt(&h[c + 3], &h[c + 2]);

		return node_lt(&h[b2], &h[b1]) ? b2 : b1;
	}
	if (c >= n)
		return 0;
	for (size_t j = c + 1; j < n; j++)
		if (node_lt(&h[j], &h[best]))
			best = j;
	return best;
}

/* Removes the root: the hole goes down to a leaf, the last node fills it. */
static void pop_root(struct eq *q)
{
	struct eq_node *h = q->heap;
	size_t n = --q->n, i = 0, c;
	struct eq_node last = h[n];

	if (n == 0)
		return;
	while ((c = least_child(h, n, i)) != 0) {
		h[i] = h[c];
		i = c;
	}
	sift_up(h, i, last);
}

static void heapify(struct eq_node *h, size_t n)
{
	for (size_t i = n / 4 + 1; i-- > 0;) {
		struct eq_node k = h[i];
		size_t j = i, c;

		while ((c = least_child(h, n, j)) != 0 && node_lt(&h[c], &k)) {
			h[j] = h[c];
			j = c;
		}
		h[j] = k;
	}
}

static inline __attribute__((always_inline)) void
heap_push(struct eq *q, struct eq_node x)
{
	reserve_heap(q, q->n + 1);
	sift_up(q->heap, q->n++, x);
}

/* Puts x where the invariant says. */
static inline __attribute__((always_inline)) void
route(struct eq *q, struct eq_node x)
{
	double b = floor((bits_time(x.t_bits) - q->base_s) * q->inv_width_s);

	if (b < (double)q->heap_end)
		heap_push(q, x);
	else if (b < (double)q->n_buckets)
		vec_push(&q->bucket[(size_t)b], x);
	else
		vec_push(&q->far, x);
}

/* Spreads the far nodes over fresh buckets (the old ones are all empty). */
static void new_epoch(struct eq *q)
{
	struct eq_vec old = q->far;
	double lo = INFINITY, hi = -INFINITY;
	size_t nb = old.n / BUCKET_FILL + 1;

	for (size_t i = 0; i < old.n; i++) {
		double t = bits_time(old.v[i].t_bits);

		lo = t < lo ? t : lo;
		hi = t > hi ? t : hi;
	}
	if (nb + 2 > q->buckets_cap) {
		q->bucket = xrealloc(q->bucket, (nb + 2) * sizeof(*q->bucket));
		memset(q->bucket + q->buckets_cap, 0,
		       (nb + 2 - q->buckets_cap) * sizeof(*q->bucket));
		q->buckets_cap = nb + 2;
	}
	q->base_s = lo;
	q->width_s = (hi - lo) / (double)nb;
	if (!(q->width_s >= 1e-300))
		q->width_s = 1; /* all at one time: all in bucket 0 */
	q->inv_width_s = 1 / q->width_s;
	q->n_buckets = nb + 2; /* room for rounding at hi */
	q->heap_end = 0;
	q->far = (struct eq_vec){ .v = NULL };
	for (size_t i = 0; i < old.n; i++)
		route(q, old.v[i]);
	free(old.v);
}

/* Makes the heap non-empty, if any node is left. */
static bool refill(struct eq *q)
{
	while (q->n == 0) {
		while (q->heap_end < q->n_buckets) {
			struct eq_vec *b = &q->bucket[q->heap_end++];

			if (b->n) {
				reserve_heap(q, b->n);
				memcpy(q->heap, b->v, b->n * sizeof(*b->v));
				q->n = b->n;
				b->n = 0;
				/* a crowded bucket gives its memory back: kept,
				 * each bucket would hold the largest crowd it saw
				 * in any epoch, and memory would grow with the
				 * length of the run instead of pending events */
				if (b->cap > 2 * BUCKET_FILL) {
					free(b->v);
					*b = (struct eq_vec){ .v = NULL };
				}
				heapify(q->heap, q->n);
				return true;
			}
		}
		if (q->far.n == 0)
			return false;
		new_epoch(q);
	}
	return true;
}

/* Calls fn on every node's place; fn returns false to drop the node. */
static void sweep(struct eq *q, bool (*keep)(struct eq *, struct eq_node *))
{
	struct eq_vec *vs[] = { &q->far, NULL };
	size_t m = 0;

	for (size_t i = 0; i < q->n; i++)
		if (keep(q, &q->heap[i]))
			q->heap[m++] = q->heap[i];
	q->n = m;
	heapify(q->heap, q->n);
	for (size_t j = 0; j <= q->n_buckets; j++) {
		struct eq_vec *v = j < q->n_buckets ? &q->bucket[j] : vs[0];

		m = 0;
		for (size_t i = 0; i < v->n; i++)
			if (keep(q, &v->v[i]))
				v->v[m++] = v->v[i];
		v->n = m;
	}
}

static bool keep_pending(struct eq *q, struct eq_node *x)
{
	uint32_t s = SLOT_OF(*x);

	if (!bit(q->cancelled, s))
		return true;
	free_slot(q, s, true);
	q->n_total--;
	return false;
}

static int cmp_nodes(const void *a, const void *b)
{
	u128 x = key(a), y = key(b);

	return (x > y) - (x < y);
}

/* Gives all nodes sequences 0..n-1 in their order. Moves them all to far,
 * sorted, so that the next pop starts a new epoch. */
static void renumber(struct eq *q)
{
	const uint64_t keep = ~(((UINT64_C(1) << SEQ_BITS) - 1) << SLOT_BITS);
	struct eq_vec all = q->far;

	for (size_t i = 0; i < q->n; i++)
		vec_push(&all, q->heap[i]);
	for (size_t j = 0; j < q->n_buckets; j++) {
		for (size_t i = 0; i < q->bucket[j].n; i++)
			vec_push(&all, q->bucket[j].v[i]);
		q->bucket[j].n = 0;
	}
	qsort(all.v, all.n, sizeof(*all.v), cmp_nodes);
	for (size_t i = 0; i < all.n; i++)
		all.v[i].ord = (all.v[i].ord & keep) | (uint64_t)i << SLOT_BITS;
	q->far = all;
	q->n = 0;
	q->n_buckets = q->heap_end = 0;
	q->seq = all.n;
}

uint64_t eq_push(struct eq *q, double t_s, int prio, struct eq_event ev)
{
	uint32_t s;

	HS_ASSERT(isfinite(t_s) && t_s >= q->now_s);
	HS_ASSERT(prio >= 0 && prio <= EQ_PRIO_MAX);
	HS_ASSERT(q->n_total < EQ_PENDING_MAX);
	if (q->seq == UINT64_C(1) << SEQ_BITS)
		renumber(q);
	s = alloc_slot(q);
	q->n_total++;
	q->payload[s] = ev;
	route(q, (struct eq_node){
		.t_bits = time_bits(t_s),
		.ord = (uint64_t)prio << PRIO_SHIFT | q->seq++ << SLOT_BITS | s,
	});
	return ((uint64_t)q->slot_gen[s] << SLOT_BITS | s) + 1;
}

bool eq_cancel(struct eq *q, uint64_t handle)
{
	uint32_t s = (uint32_t)((handle - 1) & ((1u << SLOT_BITS) - 1));
	uint32_t gen = (uint32_t)((handle - 1) >> SLOT_BITS);

	if (handle == EQ_NONE || s >= q->nslots || q->slot_gen[s] != gen ||
	    bit(q->cancelled, s))
		return false;
	set_bit(q->cancelled, s, true);
	if (++q->n_cancelled > 64 && q->n_cancelled > q->n_total / 2) {
		sweep(q, keep_pending);
		q->n_cancelled = 0;
	}
	return true;
}

bool eq_pop(struct eq *q, double *t_s, struct eq_event *ev)
{
	while (refill(q)) {
		struct eq_node top = q->heap[0];
		uint32_t s = SLOT_OF(top);
		bool cancelled = bit(q->cancelled, s);

		pop_root(q);
		q->n_total--;
		free_slot(q, s, cancelled);
		if (cancelled) {
			q->n_cancelled--;
			continue;
		}
		*t_s = q->now_s = bits_time(top.t_bits);
		*ev = q->payload[s];
		return true;
	}
	return false;
}
