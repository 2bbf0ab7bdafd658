/* prov.h: the provenance every measured file carries: which machine, when,
 * at which commit, by which command. */
#ifndef HS_PROV_H
#define HS_PROV_H

#include <jansson.h>

/* {"machine": host and CPU model, core count, memory, "cpu": the model
 * name, "date": UTC ISO 8601, "commit": `git describe --always --dirty` of
 * the working directory ("unknown" outside a repository), "command":
 * "hybridspec" and the subcommand's argv (argv[0] its name) joined by
 * spaces, "build": the commit the binary was built from, when
 * prov_set_build named it (a copied tree's git can say another)}. New
 * reference. */
json_t *prov_new(int argc, char **argv);
/* The binary's own commit for prov_new (borrowed: a static string). */
void prov_set_build(const char *commit);

#endif
