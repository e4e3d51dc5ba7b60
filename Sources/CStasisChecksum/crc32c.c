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
static int hardware_available(void) { return __builtin_cpu_supports("sse4.2"); }
#else
#define STASIS_HAVE_HW 0
#endif

static int use_hardware = -1;

int stasis_crc32c_is_hardware(void) {
  int cached = __atomic_load_n(&use_hardware, __ATOMIC_ACQUIRE);
  if (cached < 0) {
#if STASIS_HAVE_HW
    cached = hardware_available() ? 1 : 0;
#else
    cached = 0;
#endif
    __atomic_store_n(&use_hardware, cached, __ATOMIC_RELEASE);
  }
  return cached;
}

uint32_t stasis_crc32c(uint32_t crc, const void *data, size_t length) {
#if STASIS_HAVE_HW
  if (stasis_crc32c_is_hardware()) return crc32c_hardware(crc, (const uint8_t *)data, length);
#endif
  return crc32c_software(crc, (const uint8_t *)data, length);
}
