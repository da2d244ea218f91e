/* .npy reading and writing (see tools/npy.h). */
#include "tools/npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *descr;
  vkhlo_element_type_t type;
} dtypes[] = {
    {"b1", VKHLO_PRED}, {"i1", VKHLO_S8},  {"i2", VKHLO_S16}, {"i4", VKHLO_S32},
    {"i8", VKHLO_S64},  {"u1", VKHLO_U8},  {"u2", VKHLO_U16}, {"u4", VKHLO_U32},
    {"u8", VKHLO_U64},  {"f2", VKHLO_F16}, {"f4", VKHLO_F32}, {"f8", VKHLO_F64},
    {"c8", VKHLO_C64},  {"c16", VKHLO_C128},
};

static vkhlo_status_t bad(const char *path, const char *what) {
  return vkhlo_status_make(VKHLO_STATUS_INVALID_ARGUMENT, "%s: not a supported .npy file: %s", path, what);
}

vkhlo_status_t npy_read(const char *path, vkhlo_tensor_type_t *out_type, void **out_data) {
  if (out_data) *out_data = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return vkhlo_status_make(VKHLO_STATUS_NOT_FOUND, "cannot open %s: %s", path, strerror(errno));
  unsigned char magic[10];
  vkhlo_status_t st = NULL;
  char *header = NULL;
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "\x93NUMPY", 6) != 0) {
    st = bad(path, "bad magic");
    goto done;
  }
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    if (fread(b, 1, 2, f) != 2) { st = bad(path, "truncated"); goto done; }
    hlen = b[0] | (b[1] << 8);
  } else {
    unsigned char b[4];
    if (fread(b, 1, 4, f) != 4) { st = bad(path, "truncated"); goto done; }
    hlen = b[0] | (b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
  }
  if (hlen > 1 << 20) { st = bad(path, "header too long"); goto done; }
  header = calloc(hlen + 1, 1);
  if (!header || fread(header, 1, hlen, f) != hlen) { st = bad(path, "truncated header"); goto done; }
  const char *d = strstr(header, "'descr':");
  const char *o = strstr(header, "'fortran_order':");
  const char *s = strstr(header, "'shape':");
  if (!d || !o || !s) { st = bad(path, "header lacks descr/fortran_order/shape"); goto done; }
  if (strncmp(o + 16, " True", 5) == 0) { st = bad(path, "Fortran order"); goto done; }
  d = strchr(d + 8, '\'');
  if (!d) { st = bad(path, "bad descr"); goto done; }
  d++;
  if (*d == '>') { st = bad(path, "big-endian data"); goto done; }
  if (*d == '<' || *d == '|' || *d == '=') d++;
  memset(out_type, 0, sizeof *out_type);
  bool found = false;
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
    size_t n = strlen(dtypes[i].descr);
    if (strncmp(d, dtypes[i].descr, n) == 0 && d[n] == '\'') {
      out_type->element_type = dtypes[i].type;
      found = true;
    }
  }
  if (!found) { st = bad(path, "unsupported dtype"); goto done; }
  s = strchr(s, '(');
  if (!s) { st = bad(path, "bad shape"); goto done; }
  s++;
  while (*s && *s != ')') {
    while (*s == ' ' || *s == ',') s++;
    if (*s == ')') break;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0 || out_type->rank >= VKHLO_MAX_RANK) { st = bad(path, "bad shape"); goto done; }
    out_type->dimensions[out_type->rank++] = v;
    s = end;
  }
  if (!out_data) goto done; /* the type alone */
  size_t size = vkhlo_tensor_type_size_bytes(out_type);
  void *data = malloc(size ? size : 1);
  if (!data) { st = vkhlo_status_make(VKHLO_STATUS_RESOURCE_EXHAUSTED, "out of memory reading %s", path); goto done; }
  if (fread(data, 1, size, f) != size) {
    free(data);
    st = bad(path, "truncated data");
    goto done;
  }
  *out_data = data;
done:
  free(header);
  fclose(f);
  return st;
}

vkhlo_status_t npy_write(const char *path, const vkhlo_tensor_type_t *type, const void *data) {
  const char *descr = NULL;
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (dtypes[i].type == type->element_type) descr = dtypes[i].descr;
  if (!descr)
    return vkhlo_status_make(VKHLO_STATUS_UNIMPLEMENTED, "cannot write %s as .npy: no NumPy dtype for %s",
                             path, vkhlo_element_type_name(type->element_type));
  char header[512], shape[300] = "";
  size_t pos = 0;
  for (int i = 0; i < type->rank; i++)
    pos += (size_t)snprintf(shape + pos, sizeof shape - pos, "%lld,%s", (long long)type->dimensions[i],
                            (i + 1 < type->rank) ? " " : "");
  if (type->rank > 1 && pos) shape[pos - 1] = 0; /* "(2, 3)" rather than "(2, 3,)" */
  int n = snprintf(header, sizeof header, "{'descr': '%c%s', 'fortran_order': False, 'shape': (%s), }",
                   (strcmp(descr, "b1") == 0 || descr[1] == '1') ? '|' : '<', descr, shape);
  int total = 10 + n + 1;
  int pad = (64 - total % 64) % 64;
  FILE *f = fopen(path, "wb");
  if (!f) return vkhlo_status_make(VKHLO_STATUS_NOT_FOUND, "cannot write %s: %s", path, strerror(errno));
  unsigned hlen = (unsigned)(n + pad + 1);
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff),
                           (unsigned char)(hlen >> 8)};
  fwrite(pre, 1, 10, f);
  fwrite(header, 1, (size_t)n, f);
  for (int i = 0; i < pad; i++) fputc(' ', f);
  fputc('\n', f);
  size_t size = vkhlo_tensor_type_size_bytes(type);
  bool ok = fwrite(data, 1, size, f) == size;
  ok = (fclose(f) == 0) && ok;
  return ok ? NULL : vkhlo_status_make(VKHLO_STATUS_NOT_FOUND, "error writing %s", path);
}
