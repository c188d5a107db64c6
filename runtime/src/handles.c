/* Live handles: a small open-addressing hash set of pointers under one mutex. Programs hold a
 * handful of handles, so the table stays tiny; it grows by doubling when half full. */
#include "handles.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static const void **g_slots;  /* NULL = empty, TOMBSTONE = removed */
static size_t g_cap, g_used; /* g_used counts live entries and tombstones */
static const char g_tombstone_byte;
#define TOMBSTONE ((const void *)&g_tombstone_byte)

static size_t hash_of(const void *p, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

/* Slot holding `p`, or SIZE_MAX. */
static size_t find(const void *p) {
  if (!g_cap) return SIZE_MAX;
  for (size_t i = hash_of(p, g_cap), n = 0; n < g_cap; i = (i + 1) & (g_cap - 1), n++) {
    if (g_slots[i] == p) return i;
    if (!g_slots[i]) return SIZE_MAX;
  }
  return SIZE_MAX;
}

static bool insert_unlocked(const void *p);

static bool grow(void) {
  size_t old_cap = g_cap;
  const void **old = g_slots;
  size_t cap = old_cap ? old_cap * 2 : 16;
  const void **slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  g_slots = slots;
  g_cap = cap;
  g_used = 0;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i] && old[i] != TOMBSTONE) insert_unlocked(old[i]);
  free(old);
  return true;
}

static bool insert_unlocked(const void *p) {
  if ((g_used + 1) * 2 > g_cap && !grow()) return false;
  size_t i = hash_of(p, g_cap);
  while (g_slots[i] && g_slots[i] != TOMBSTONE) i = (i + 1) & (g_cap - 1);
  if (!g_slots[i]) g_used++;
  g_slots[i] = p;
  return true;
}

bool onnxc_handle_register(const void *handle) {
  pthread_mutex_lock(&g_lock);
  bool ok = find(handle) != SIZE_MAX || insert_unlocked(handle);
  pthread_mutex_unlock(&g_lock);
  return ok;
}

bool onnxc_handle_unregister(const void *handle) {
  pthread_mutex_lock(&g_lock);
  size_t i = find(handle);
  if (i != SIZE_MAX) g_slots[i] = TOMBSTONE;
  pthread_mutex_unlock(&g_lock);
  return i != SIZE_MAX;
}
