/* vkhlo CLI (being written). */
#include "vkhlo/vkhlo.h"
int main(void) { return 0; }
