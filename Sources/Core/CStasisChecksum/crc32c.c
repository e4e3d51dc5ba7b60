// CRC32C for Stasis save files. Swift has no CRC32C in its standard library or in the packages
// this project may use, and the format needs one that runs at memory speed, so it lives here:
// the CPU's CRC32 instruction (three independent streams to hide its latency), with a
// portable slicing-by-8 table for CPUs without it.
#include "stasis_crc32c.h"
#include <string.h>

static uint32_t table[8][256];
static int table_ready = 0;

static void build_table(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t crc = i;
    for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    table[0][i] = crc;
  }
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t crc = table[0][i];
    for (int t = 1; t < 8; t++) {
      crc = table[0][crc & 0xFF] ^ (crc >> 8);
      table[t][i] = crc;
    }
  }
  __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

static uint32_t crc32c_software(uint32_t crc, const uint8_t *p, size_t n) {
  if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) build_table();
  crc = ~crc;
  while (n >= 8) {
    uint64_t word;
    memcpy(&word, p, 8);
    word ^= crc;
    crc = table[7][word & 0xFF] ^ table[6][(word >> 8) & 0xFF] ^ table[5][(word >> 16) & 0xFF] ^
          table[4][(word >> 24) & 0xFF] ^ table[3][(word >> 32) & 0xFF] ^ table[2][(word >> 40) & 0xFF] ^
          table[1][(word >> 48) & 0xFF] ^ table[0][word >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) crc = table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

// Multiplies two polynomials mod P (reflected), for combining independent streams.
static uint32_t gf2_multiply(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (int i = 0; i < 32; i++) {
    product ^= (0u - ((b >> 31) & 1u)) & a;
    a = (a >> 1) ^ (0x82F63B78u & (0u - (a & 1u)));
    b <<= 1;
  }
  return product;
}

// x^(8*bytes) mod P, reflected: shifts a CRC state forward over `bytes` zero bytes.
static uint32_t shift_constant(size_t bytes) {
  uint32_t result = 0x80000000u;  // x^0
  uint32_t power = 0x00800000u;   // x^8 (one byte)
  while (bytes) {
    if (bytes & 1) result = gf2_multiply(result, power);
    power = gf2_multiply(power, power);
    bytes >>= 1;
  }
  return result;
}

#if defined(__x86_64__)
#include <immintrin.h>
#include <nmmintrin.h>
#define STASIS_HAVE_HW 1
__attribute__((target("sse4.2"))) static uint32_t crc32c_hardware(uint32_t crc, const uint8_t *p, size_t n) {
  uint64_t c0 = ~crc;
  // Three streams of `block` bytes each, combined afterwards: the instruction's latency is 3 cycles
  // and its throughput 1, so one stream would run at a third of the speed.
  const size_t block = 4096;
  if (n >= 3 * block) {
    static uint32_t shift_block = 0;
    if (!shift_block) shift_block = shift_constant(block);
    while (n >= 3 * block) {
      uint64_t c1 = 0, c2 = 0;
      const uint8_t *p1 = p + block, *p2 = p + 2 * block;
      for (size_t i = 0; i < block; i += 8) {
        uint64_t w0, w1, w2;
        memcpy(&w0, p + i, 8);
        memcpy(&w1, p1 + i, 8);
        memcpy(&w2, p2 + i, 8);
        c0 = _mm_crc32_u64(c0, w0);
        c1 = _mm_crc32_u64(c1, w1);
        c2 = _mm_crc32_u64(c2, w2);
      }
      c0 = gf2_multiply((uint32_t)c0, shift_block) ^ (uint32_t)c1;
      c0 = gf2_multiply((uint32_t)c0, shift_block) ^ (uint32_t)c2;
      p += 3 * block;
      n -= 3 * block;
    }
  }
  while (n >= 8) {
    uint64_t word;
    memcpy(&word, p, 8);
    c0 = _mm_crc32_u64(c0, word);
    p += 8;
    n -= 8;
  }
  uint32_t c = (uint32_t)c0;
  while (n--) c = _mm_crc32_u8(c, *p++);
  return ~c;
}
// Folding with carry-less multiplication, 256 bytes a step in four 512-bit accumulators
// (Intel's "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ", widened to
// VPCLMULQDQ): about three times the CRC instruction's speed, so a copy that checksums runs
// as fast as a `memcpy`. The constants are x^(D+32) and x^(D-32) mod P, bit-reflected and
// shifted left by one, for a fold over D bits: D = 2048 (one step), 512 (accumulator into
// accumulator), 384, 256 and 128 (lane into lane). The 128 bits left are finished with the
// CRC instruction, which then goes on over the last bytes. Tests check it against the
// bitwise definition at every length up to a few steps, from every alignment.
#define STASIS_FOLD_TARGET __attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.2")))
STASIS_FOLD_TARGET static inline __m512i fold512(__m512i x, __m512i k) {
  return _mm512_xor_si512(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11));
}
STASIS_FOLD_TARGET static inline __m128i fold128(__m128i x, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}
#define STASIS_K4(lo, hi) _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo)

// Loads 256 bytes into four registers.
STASIS_FOLD_TARGET static inline void load256(__m512i v[4], const uint8_t *p) {
  v[0] = _mm512_loadu_si512(p);
  v[1] = _mm512_loadu_si512(p + 64);
  v[2] = _mm512_loadu_si512(p + 128);
  v[3] = _mm512_loadu_si512(p + 192);
}

// Stores four registers' 256 bytes.
STASIS_FOLD_TARGET static inline void store256(uint8_t *d, const __m512i v[4]) {
  _mm512_storeu_si512(d, v[0]);
  _mm512_storeu_si512(d + 64, v[1]);
  _mm512_storeu_si512(d + 128, v[2]);
  _mm512_storeu_si512(d + 192, v[3]);
}

// The CRC of `n` >= 256 bytes at `p`, continuing from `crc`; copied to `d` as well unless it is NULL.
STASIS_FOLD_TARGET static uint32_t crc32c_fold(uint32_t crc, uint8_t *d, const uint8_t *p, size_t n) {
  __m512i acc[4], y[4];
  load256(acc, p);
  if (d) {
    store256(d, acc);
    d += 256;
  }
  // The running CRC enters as the first 32 bits of the data, XORed in.
  acc[0] = _mm512_xor_si512(acc[0], _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)~crc)));
  p += 256;
  n -= 256;
  const __m512i k2048 = STASIS_K4(0xdcb17aa4, 0xb9e02b86);
  while (n >= 256) {
    load256(y, p);
    if (d) {
      store256(d, y);
      d += 256;
    }
    acc[0] = _mm512_xor_si512(fold512(acc[0], k2048), y[0]);
    acc[1] = _mm512_xor_si512(fold512(acc[1], k2048), y[1]);
    acc[2] = _mm512_xor_si512(fold512(acc[2], k2048), y[2]);
    acc[3] = _mm512_xor_si512(fold512(acc[3], k2048), y[3]);
    p += 256;
    n -= 256;
  }
  __m512i x0 = acc[0], x1 = acc[1], x2 = acc[2], x3 = acc[3];
  const __m512i k512 = STASIS_K4(0x740eef02, 0x9e4addf8);
  __m512i x = _mm512_xor_si512(fold512(x0, k512), x1);
  x = _mm512_xor_si512(fold512(x, k512), x2);
  x = _mm512_xor_si512(fold512(x, k512), x3);
  __m128i r = _mm_xor_si128(fold128(_mm512_extracti32x4_epi32(x, 0), _mm_set_epi64x(0x1d82c63da, 0x1c291d04)),
                            fold128(_mm512_extracti32x4_epi32(x, 1), _mm_set_epi64x(0xba4fc28e, 0x1384aa63a)));
  r = _mm_xor_si128(r, fold128(_mm512_extracti32x4_epi32(x, 2), _mm_set_epi64x(0x14cd00bd6, 0xf20c0dfe)));
  r = _mm_xor_si128(r, _mm512_extracti32x4_epi32(x, 3));
  uint64_t state = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(r));
  state = _mm_crc32_u64(state, (uint64_t)_mm_extract_epi64(r, 1));
  if (d) memcpy(d, p, n);
  return crc32c_hardware(~(uint32_t)state, p, n);
}
static int fold_available(void) {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq") &&
         __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.2");
}

static int hardware_available(void) { return __builtin_cpu_supports("sse4.2"); }
#else
#define STASIS_HAVE_HW 0
#endif

#if !STASIS_HAVE_HW
static int hardware_available(void) { return 0; }
static int fold_available(void) { return 0; }
#endif

static int use_hardware = -1;
static int use_fold = -1;

// What `probe` said of this CPU, asked once and kept in `cache` (-1 until asked).
static int cached_probe(int *cache, int (*probe)(void)) {
  int cached = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (cached < 0) {
    cached = probe() ? 1 : 0;
    __atomic_store_n(cache, cached, __ATOMIC_RELEASE);
  }
  return cached;
}

// 1 when the folding path is in use: the CPU has VPCLMULQDQ and AVX-512, and the OS saves their state.
static int fold_in_use(void) { return cached_probe(&use_fold, fold_available); }

int stasis_crc32c_is_hardware(void) { return cached_probe(&use_hardware, hardware_available); }

uint32_t stasis_crc32c_on(uint32_t crc, const void *data, size_t length, int fold) {
#if STASIS_HAVE_HW
  if (length >= 256 && fold && fold_in_use()) return crc32c_fold(crc, NULL, (const uint8_t *)data, length);
  if (stasis_crc32c_is_hardware()) return crc32c_hardware(crc, (const uint8_t *)data, length);
#endif
  return crc32c_software(crc, (const uint8_t *)data, length);
}

uint32_t stasis_crc32c(uint32_t crc, const void *data, size_t length) { return stasis_crc32c_on(crc, data, length, 1); }

uint32_t stasis_crc32c_copy_on(uint32_t crc, void *destination, const void *source, size_t length, int fold) {
#if STASIS_HAVE_HW
  if (length >= 256 && fold && fold_in_use())
    return crc32c_fold(crc, (uint8_t *)destination, (const uint8_t *)source, length);
#endif
  // Without folding, a copy then a checksum: the CRC instruction alone is slower than memory,
  // so reading the bytes once would not make it faster.
  memcpy(destination, source, length);
  return stasis_crc32c_on(crc, destination, length, 0);
}

uint32_t stasis_crc32c_copy(uint32_t crc, void *destination, const void *source, size_t length) {
  return stasis_crc32c_copy_on(crc, destination, source, length, 1);
}

int stasis_crc32c_is_folding(void) { return fold_in_use(); }
