/* tdirs.c: what the suites that run the binary on models share (not in
 * the NEON kernel tests, which have no models). */
#define _DEFAULT_SOURCE /* realpath, setenv */
#include "harness.h"

#include <limits.h>
#include <stdlib.h>

#include "mload.h"

void t_absolute_dirs(void)
{
	char buf[PATH_MAX];

	if (mload_models_dir() && realpath(mload_models_dir(), buf))
		setenv("HYBRIDSPEC_MODELS", buf, 1);
	if (realpath(mload_data_dir(), buf))
		setenv("HYBRIDSPEC_DATA", buf, 1);
}

int t_need_models(void)
{
	if (mload_models_dir())
		return 1;
	CHECK_MSG(0, "no models folder: set HYBRIDSPEC_MODELS or put shared/ "
		  "beside the checkout");
	return 0;
}
