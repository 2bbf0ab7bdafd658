/* test_formula.c: the closed forms against values worked by hand. */
#include "harness.h"

#include "formula.h"

static void closed_forms(void)
{
	/* alpha 0.5, gamma 2: 1 + 0.5 + 0.25 */
	CHECK_NEAR(fm_expected_accepted(0.5, 2), 1.75, 1e-12);
	CHECK_NEAR(fm_expected_accepted(1.0, 4), 5, 1e-12);
	CHECK_NEAR(fm_expected_accepted(0.0, 4), 1, 1e-12);
	/* K given a rejection in 2: P(0) = 0.5 / 0.75, P(1) = 0.25 / 0.75 */
	CHECK_NEAR(fm_accepted_in_rejected(0.5, 2), 1.0 / 3, 1e-12);
	CHECK_NEAR(fm_leviathan_improvement(0.5, 2, 0.25), 1.75 / 1.5, 1e-12);
	CHECK_NEAR(fm_sync_s_per_token(0.5, 2, 0.01, 0.05, 0.006),
		   0.076 / 1.75, 1e-12);
	CHECK_NEAR(fm_paper_async_s_per_token(4, 0.01, 0.05, 0.006), 0.056 / 4,
		   1e-12);
	CHECK_NEAR(fm_paper_async_s_per_token(4, 0.02, 0.05, 0.006), 0.02,
		   1e-12);
	CHECK_NEAR(fm_window_s_per_token(4, 2, 0.01, 0.06), 0.1 / 8, 1e-12);
	CHECK_NEAR(fm_window_s_per_token(4, 8, 0.01, 0.06), 0.01, 1e-12);
	CHECK_NEAR(fm_md1_wait_s(0.5, 0.004), 0.002, 1e-12);
	CHECK_NEAR(fm_balance_two_stage(0.05, 0.006), 0.056, 1e-12);
	CHECK_NEAR(fm_balance_paper(0.05, 0.006), -0.044, 1e-12);
}

/* The renewal model by hand for W unbounded, and its limits. */
static void renewal(void)
{
	double a = 0.5, d = 0.01, r = 0.05;
	int g = 2;
	double p = 0.25, ej = 1 / (1 - p), ek = 1.0 / 3;
	double want = (g * d * ej + r) / (g * (ej - 1) + ek + 1);

	CHECK_NEAR(fm_async_renewal_s_per_token(a, g, 0, d, r), want, 1e-12);
	/* a window that never binds changes nothing */
	CHECK_NEAR(fm_async_renewal_s_per_token(a, g, 64, d, r), want, 1e-12);
	/* alpha 1 is the window pipeline */
	CHECK_NEAR(fm_async_renewal_s_per_token(1.0, 4, 2, 0.01, 0.06),
		   fm_window_s_per_token(4, 2, 0.01, 0.06), 1e-12);
	/* a binding window makes it slower */
	CHECK(fm_async_renewal_s_per_token(0.9, 4, 2, 0.01, 0.2) >
	      fm_async_renewal_s_per_token(0.9, 4, 0, 0.01, 0.2) * 1.01);
	/* alpha 0: every cycle is one block and one correction */
	CHECK_NEAR(fm_async_renewal_s_per_token(0.0, 3, 0, d, r), 3 * d + r,
		   1e-12);
}

/* cloud_spec: alpha 0.5, gamma 2 commits 1.75 tokens a round of 2 draft
 * steps of 1 ms and a 6 ms verification; the capacity ratio of the claim
 * in arXiv 2606.25091. */
static void cloud_spec_forms(void)
{
	CHECK_NEAR(fm_cloud_spec_s_per_token(0.5, 2, 0.001, 0.006), 0.008 / 1.75,
		   1e-15);
	CHECK_NEAR(fm_cloud_spec_capacity_ratio(4, 0.001, 0.005), 1.8, 1e-15);
	CHECK_NEAR(fm_cloud_spec_capacity_ratio(4, 0, 0.005), 1, 0);
}

const struct tcase formula_tests[] = {
	{ "formula: cloud_spec's time a token and capacity ratio",
	  cloud_spec_forms },
	{ "formula: closed forms against hand values", closed_forms },
	{ "formula: the async renewal model and its limits", renewal },
	{ 0 },
};
