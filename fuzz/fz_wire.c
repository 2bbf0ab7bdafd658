/* fz_wire.c: two clients' byte streams as the server sees them, interleaved
 * frame by frame: each frame decoded (wire_decode) and applied to the
 * verifier by the server's own step (serve_handle), with an iteration run
 * whenever work is ready. The target is a tiny synthetic model (vocabulary
 * 32, context 64), so positions, epochs, budgets and token ids all reach
 * their limits. A malformed frame or a protocol error ends the stream, as
 * the server's disconnect does. */
#include "fz.h"

#include "serve.h"
#include "synth.h"
#include "verifier.h"
#include "wire.h"
#include "mem.h"

static int fz_wire(const uint8_t *data, size_t size)
{
	static struct llama m;
	static int have;
	struct serve_client cl[2] = { { 0 } };
	struct wire_msg *msg = xmalloc(sizeof(*msg));
	struct verifier v;
	struct viter it;
	struct err e;
	size_t at = 0;
	int rc = 0, frame = 0;

	if (!have) {
		struct llama_config c = { .dim = 16, .hidden = 32, .n_layers = 1,
					  .n_heads = 2, .n_kv_heads = 1,
					  .vocab = 32, .seq_len = 64,
					  .norm_eps = 1e-5f, .rope_theta = 1e4f };
		struct quant q = { .format = LIN_F32 };

		if (synth_llama(&m, &c, &q, 1, &e) < 0)
			abort();
		have = 1;
	}
	verifier_init(&v, &m, 16, 8, 0, 2);
	while (at < size && rc == 0) {
		long n = wire_decode(data + at, size - at, msg, &e);
		double wait;

		if (n <= 0) {
			rc = (int)n;
			break;
		}
		at += (size_t)n;
		rc = serve_handle(&v, &cl[frame % 2], frame % 2, msg, NULL, frame,
				  &e);
		frame++;
		if (rc == 0 && verifier_ready(&v, frame, &wait))
			verifier_iterate(&v, &it);
	}
	verifier_release(&v);
	free(msg);
	return rc;
}

FZ_TARGET(fz_wire)
