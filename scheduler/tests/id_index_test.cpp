#include "scheduler/id_index.hpp"

#include "scheduler/random.hpp"

#include <gtest/gtest.h>

#include <string>
#include <unordered_map>

namespace phalanx::scheduler {
namespace {

// The objects the ids name: id -> key, as the registry's pods hold their names. `hash_calls`
// counts what the index asks of the ids' keys (only a rehash or an erase should).
struct key_book {
  std::unordered_map<uint64_t, std::string> keys;
  std::size_t hash_calls = 0;
};

// A deliberately weak hash: 1,024 values for up to 6,000 keys, so probes meet other keys with
// the same tag and the index must ask `matches` to tell them apart.
std::size_t weak_hash(std::string_view key) {
  return (std::hash<std::string_view>{}(key) % 1024) * 0x9e3779b97f4a7c15ULL;
}

struct book_ops {
  key_book* book = nullptr;
  std::size_t hash(std::string_view key) const { return weak_hash(key); }
  std::size_t hash_of(uint64_t id) const {
    ++book->hash_calls;
    return weak_hash(book->keys.at(id));
  }
  bool matches(std::string_view key, uint64_t id) const { return book->keys.at(id) == key; }
};

using index_type = id_index<std::string_view, book_ops>;

TEST(IdIndex, AgreesWithAMapOfKeysThroughGrowthTombstonesAndShrinking) {
  key_book book;
  index_type index{book_ops{&book}};
  std::unordered_map<std::string, uint64_t> model; // key -> id, the truth.
  rng random{7};
  uint64_t next_id = 1;
  auto key_of = [](uint64_t k) {
    return "ns-" + std::to_string(k % 3) + "/p-" + std::to_string(k);
  };
  for (int step = 0; step < 40'000; ++step) {
    // Grow to about 3,000 keys, then mostly erase, so both growth and shrinking happen.
    const bool growing = step < 20'000;
    const auto roll = random() % 100;
    const uint64_t k = random() % 6'000;
    const auto key = key_of(k);
    if (roll < (growing ? 60 : 20)) {
      // Insert, or give an existing key a new id (the index replaces the old id).
      auto id = next_id++;
      book.keys[id] = key;
      index.insert(key, id);
      if (auto old = model.find(key); old != model.end())
        book.keys.erase(old->second); // After the index let go of it.
      model[key] = id;
    } else if (roll < 90) {
      auto m = model.find(key);
      if (m == model.end())
        continue;
      ASSERT_TRUE(index.erase(m->second)) << key;
      EXPECT_FALSE(index.erase(m->second)) << "erased twice: " << key;
      book.keys.erase(m->second); // After the index: it reads the key to find the slot.
      model.erase(m);
    } else {
      auto m = model.find(key);
      EXPECT_EQ(index.find(key), m == model.end() ? 0 : m->second) << key;
    }
    ASSERT_EQ(index.size(), model.size());
  }
  for (int k = 0; k < 6'000; ++k) {
    auto m = model.find(key_of(k));
    EXPECT_EQ(index.find(key_of(k)), m == model.end() ? 0 : m->second);
  }
  // Load stays at most 3/4, and a table mostly emptied gave its room back.
  EXPECT_LE(index.size() * 4, index.capacity() * 3);
  EXPECT_LE(index.capacity(), std::max<std::size_t>(64, index.size() * 16));
  for (const auto& [key, id] : model)
    ASSERT_TRUE(index.erase(id));
  EXPECT_TRUE(index.empty());
  EXPECT_EQ(index.capacity(), 0u);
  EXPECT_EQ(index.find("ns-0/p-0"), 0u);
}

TEST(IdIndex, LooksUpWithoutAskingForTheKeysOfIdsAndRefusesIdsItCannotPack) {
  key_book book;
  index_type index{book_ops{&book}};
  index.reserve(1'000);
  for (uint64_t id = 1; id <= 1'000; ++id) {
    book.keys[id] = "k-" + std::to_string(id);
    index.insert(book.keys[id], id);
  }
  EXPECT_EQ(book.hash_calls, 0u) << "room was reserved: no rehash, so no key was hashed by id";
  for (uint64_t id = 1; id <= 1'000; ++id)
    ASSERT_EQ(index.find("k-" + std::to_string(id)), id);
  EXPECT_EQ(index.find("k-0"), 0u);
  EXPECT_EQ(book.hash_calls, 0u);
  EXPECT_THROW(index.insert("zero", 0), std::out_of_range);
  EXPECT_THROW(index.insert("huge", index_type::max_id + 1), std::out_of_range);
  book.keys[index_type::max_id] = "largest";
  index.insert("largest", index_type::max_id);
  EXPECT_EQ(index.find("largest"), index_type::max_id);
  EXPECT_EQ(index.size(), 1'001u);
}

} // namespace
} // namespace phalanx::scheduler
