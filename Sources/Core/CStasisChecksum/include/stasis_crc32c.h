#ifndef STASIS_CRC32C_H
#define STASIS_CRC32C_H
#include <stddef.h>
#include <stdint.h>

/// CRC32C (Castagnoli) of `length` bytes, continuing from `crc` (start with 0).
/// Uses the SSE4.2 / ARMv8 CRC instruction when the CPU has it, slicing-by-8 otherwise.
uint32_t stasis_crc32c(uint32_t crc, const void *data, size_t length);

/// Copies `length` bytes from `source` to `destination` (which must not overlap) and returns
/// their CRC32C continuing from `crc`: in one pass where the CPU folds (VPCLMULQDQ), else a
/// copy then a checksum.
uint32_t stasis_crc32c_copy(uint32_t crc, void *destination, const void *source, size_t length);

/// 1 when the hardware instruction is in use, for benchmarks and logs.
int stasis_crc32c_is_hardware(void);

/// 1 when the carry-less-multiplication path (VPCLMULQDQ) is in use for 256 bytes and more.
int stasis_crc32c_is_folding(void);

/// `stasis_crc32c` and `stasis_crc32c_copy` with the carry-less-multiplication path allowed
/// (`fold` 1, where the CPU has it) or not (0): tests check both paths against the definition on
/// the same machine, each call choosing its own, so no test changes what another one runs.
uint32_t stasis_crc32c_on(uint32_t crc, const void *data, size_t length, int fold);
uint32_t stasis_crc32c_copy_on(uint32_t crc, void *destination, const void *source, size_t length, int fold);

#endif
