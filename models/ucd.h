/* ucd.h: the Unicode character classes a pre-tokeniser needs (\p{L},
 * \p{N} and \s of the regular expressions tokenizers are specified by),
 * from a generated table (models/ucd.c, scripts/gen-ucd.py). */
#ifndef HS_UCD_H
#define HS_UCD_H

#include <stddef.h>
#include <stdint.h>

int ucd_is_letter(uint32_t cp); /* general category L* */
int ucd_is_number(uint32_t cp); /* general category N* */
int ucd_is_space(uint32_t cp);  /* the White_Space property */

#endif
