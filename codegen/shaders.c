/* Lookup in the table of embedded shaders/ files (see codegen/shaders.h). */
#include "codegen/shaders.h"

#include <string.h>

const shaders_file_t *shaders_find(const char *name) {
  for (const shaders_file_t *f = shaders_files; f->name; f++)
    if (strcmp(f->name, name) == 0) return f;
  return NULL;
}
