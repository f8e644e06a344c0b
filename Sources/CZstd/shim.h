// zstd's streaming, dictionary and skippable-frame APIs (libzstd-dev).
#include <zstd.h>
#include <zdict.h>
