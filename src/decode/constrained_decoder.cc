// ConstrainedDecoder (constrained_decoder.h): the replayed state per complete line (cached
// and reused while prefixes extend), a character cursor over the partial line that
// follows the canonical grammar word by word, and a walk of the vocabulary trie that
// keeps the tokens whose every character the cursor accepts. The semantic judgement of
// words is line_oracle.h's.
#include "dragon/decode/constrained_decoder.h"

#include <algorithm>
#include <bitset>
#include <limits>
#include <tuple>

#include "dragon/schedule/schedule.h"
#include "dragon/support/error.h"
#include "line_oracle.h"
#include "script_words.h"

namespace dragon::decode {

using script::all_kind_schemas;
using script::SpecialToken;

namespace {

// A committed position of a line, with its options and its children by word, so a
// walk over many tokens reads each word's consequences once.
struct Node {
  Position pos;
  const Options* options = nullptr;
  std::unordered_map<std::string, std::unique_ptr<Node>> children;  // null: not readable
  bool child_known(const std::string& w) const { return children.count(w) > 0; }
  // Per first byte of a word here: -1 unknown, else whether the word can start with it
  // (every walk through this position asks for each byte of the trie's root).
  std::vector<int8_t> first_byte_viable;
  // Whether `ch` occurs anywhere in a listed word of `o` (this position's options): a word
  // ending in another byte is no listed word's prefix. The walk tries every byte of the
  // trie's root after a partial word; most never occur.
  bool may_be_listed(const Options& o, char ch) {
    if (!listed_bytes_known) {
      for (const std::string& w : o.words) {
        for (char b : w) listed_bytes.set(static_cast<unsigned char>(b));
      }
      listed_bytes_known = true;
    }
    return listed_bytes.test(static_cast<unsigned char>(ch));
  }
  std::bitset<256> listed_bytes;
  bool listed_bytes_known = false;
};

// Everything known about one line's start: the state before it and its positions.
struct LineContext {
  std::shared_ptr<ReplayState> state;
  std::unique_ptr<LineOracle> oracle;
  Node root;
  size_t text_end = 0;  // where this line starts in the script text
};

bool is_lower(char c) { return c >= 'a' && c <= 'z'; }

}  // namespace

struct ConstrainedDecoder::Impl {
  const Tokenizer& tokenizer;
  ir::PrimFunc workload;
  OracleCounters counters;
  DecoderMemory memory;  // what the line states' oracles share
  int64_t lines_applied = 0;
  // contexts[i] is the state before line i of `complete_text`; the last one is where
  // the partial line starts.
  std::vector<std::unique_ptr<LineContext>> contexts;
  std::string complete_text;
  // The last token prefix given to allowed_tokens and its text.
  std::vector<TokenId> decoded_ids;
  std::string decoded_text;

  const bool shortcuts;

  Impl(const Tokenizer& t, ir::PrimFunc f, bool shortcuts_on)
      : tokenizer(t), workload(std::move(f)), shortcuts(shortcuts_on) {
    size_t longest = 0;
    for (TokenId id = 0; id < static_cast<TokenId>(tokenizer.size()); ++id) {
      longest = std::max(longest, tokenizer.text(id).size());
    }
    walk_cursors.resize(longest + 1);
    index_bare_subtrees();
    auto st = std::make_shared<ReplayState>(schedule::Schedule(workload));
    contexts.push_back(make_context(std::move(st), 0));
  }

  std::unique_ptr<LineContext> make_context(std::shared_ptr<ReplayState> st, size_t text_end) {
    auto ctx = std::make_unique<LineContext>();
    ctx->state = std::move(st);
    ctx->oracle = std::make_unique<LineOracle>(ctx->state, &counters, &memory);
    ctx->oracle->set_shortcuts(shortcuts);
    ctx->text_end = text_end;
    return ctx;
  }

  const Options& options(LineContext& ctx, Node& node) {
    if (node.options == nullptr) node.options = &ctx.oracle->options(node.pos);
    return *node.options;
  }

  // The position after `word` at `node`, if the word is admitted there.
  Node* child(LineContext& ctx, Node& node, const std::string& word) {
    auto it = node.children.find(word);
    if (it != node.children.end()) return it->second.get();
    std::unique_ptr<Node> next;
    const Options& o = options(ctx, node);
    const bool listed = std::binary_search(o.words.begin(), o.words.end(), word);
    bool admitted = listed;
    if (!admitted && o.any_int) {
      auto v = parse_canonical_int(word);
      admitted = v && o.int_lo <= *v && *v <= o.int_hi;
    }
    if (!admitted && o.any_float) admitted = parse_canonical_float(word).has_value();
    if (!admitted && o.any_string) {
      admitted = parse_string_word(word, o.string_names, o.string_enum).has_value();
    }
    if (admitted) {
      auto pos = ctx.oracle->advance(node.pos, word);
      // Listed words were checked one by one; a word of an unbounded class is checked now.
      if (pos && (listed || ctx.oracle->feasible(*pos))) {
        next = std::make_unique<Node>();
        next->pos = std::move(*pos);
      }
    }
    Node* raw = next.get();
    node.children.emplace(word, std::move(next));
    return raw;
  }

  // The character-level state of a partial line.
  struct Cursor {
    LineContext* ctx = nullptr;
    Node* node = nullptr;
    std::string word;
    // kItemStart: at a line's start or after a space; kAfterOpen: right after '['.
    enum Phase : uint8_t { kItemStart, kAfterOpen, kInWord, kAfterClose, kLineEnd } phase = kItemStart;
    // The word so far is a viable bare-word prefix where any string may come: then the
    // word stays viable while bare word characters follow (each step is O(1) there).
    bool bare = false;
    // The words of the node's options (sorted) that start with word[0, narrowed):
    // [words_lo, words_hi), narrowed to the whole word only when asked (listed_prefix):
    // most steps are decided by an unbounded class first.
    uint32_t words_lo = 0, words_hi = 0, narrowed = 0;
    void start_word(const Options& o, char ch) {
      word.assign(1, ch);
      words_lo = 0;
      words_hi = static_cast<uint32_t>(o.words.size());
      narrowed = 0;
    }
    // The words of o.words that start with `word`: the range narrowed byte by byte. The
    // words in the range start with word[0, k), so those equal to it come first and the
    // rest are ordered by byte k.
    std::pair<uint32_t, uint32_t> listed_range(const Options& o) const {
      uint32_t lo = words_lo, hi = words_hi;
      for (size_t k = narrowed; k < word.size() && lo < hi; ++k) {
        const auto uc = static_cast<unsigned char>(word[k]);
        auto first = o.words.begin() + lo, last = o.words.begin() + hi;
        auto a = std::partition_point(first, last, [&](const std::string& s) {
          return s.size() <= k || static_cast<unsigned char>(s[k]) < uc;
        });
        auto b = std::partition_point(a, last, [&](const std::string& s) { return static_cast<unsigned char>(s[k]) == uc; });
        lo = static_cast<uint32_t>(a - o.words.begin());
        hi = static_cast<uint32_t>(b - o.words.begin());
      }
      return {lo, hi};
    }
    // Makes this cursor `from` again after a step from it: a step appends one byte to the
    // word, empties it, or starts one from the empty word (after a line end too), so
    // the word is cut back, not copied (the walk restores a cursor per trie child).
    void restore(const Cursor& from, size_t from_word_size) {
      ctx = from.ctx;
      node = from.node;
      phase = from.phase;
      bare = from.bare;
      words_lo = from.words_lo;
      words_hi = from.words_hi;
      narrowed = from.narrowed;
      if (word.size() == from_word_size + 1) word.pop_back();
      else if (word.size() != from_word_size) word.assign(from.word);
    }
    // Whether some word of o.words starts with `word` (keeps the narrowed range).
    bool listed_prefix(const Options& o) {
      std::tie(words_lo, words_hi) = listed_range(o);
      narrowed = static_cast<uint32_t>(word.size());
      return words_lo < words_hi;
    }
  };

  // int_prefix_viable, with the common unbounded range (annotation values, categorical
  // candidates) decided from the spelling alone: an optional '-', then "0" alone or up to
  // 18 digits without a leading zero (every such integer fits int64).
  static bool int_viable(const Options& o, std::string_view w) {
    if (o.int_lo == std::numeric_limits<int64_t>::min() && o.int_hi == std::numeric_limits<int64_t>::max()) {
      const std::string_view digits = !w.empty() && w[0] == '-' ? w.substr(1) : w;
      if (digits.size() <= 18 && (digits.empty() || digits[0] != '0' || (digits.size() == 1 && w.size() == 1)) &&
          std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
        return true;
    }
    return int_prefix_viable(w, o.int_lo, o.int_hi);
  }

  // Whether the cursor's word is an integer where any int64 may come, and stays one
  // (int_viable's spelling rule) after any `more` digits: an optional '-', then a nonzero
  // digit, at most 18 digits in all.
  static bool stays_unbounded_int(const Cursor& c, size_t more) {
    const Options* o = c.node->options;
    if (o == nullptr || !o->any_int || o->int_lo != std::numeric_limits<int64_t>::min() ||
        o->int_hi != std::numeric_limits<int64_t>::max())
      return false;
    const std::string_view w = c.word;
    const std::string_view digits = !w.empty() && w[0] == '-' ? w.substr(1) : w;
    return !digits.empty() && digits[0] >= '1' && digits[0] <= '9' && digits.size() + more <= 18 &&
           std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  }

  // Whether the cursor's word can still become an admitted word at its node.
  static bool word_viable(const Options& o, Cursor& c) {
    const std::string_view w = c.word;
    // The unbounded classes first (the same disjunction in a cheaper order): at their
    // positions most of the words a walk tries are identifiers or integers.
    if (o.any_string && w[0] != '"' && bare_prefix_viable(w)) return true;
    if (o.any_int && int_viable(o, w)) return true;
    if (c.node->may_be_listed(o, w.back()) && c.listed_prefix(o)) return true;
    if (o.any_float && (o.float_nonnegative ? probability_prefix_viable(w) : float_prefix_viable(w, false))) return true;
    return o.any_string && w[0] == '"' && (quoted_closed(w) || quoted_prefix_viable(w));
  }

  // Feeds one character; false when no valid script continues with it. `listed_next`:
  // the caller knows that `ch` continues the word into a prefix of a listed word where
  // only listed words may come (the walk's byte filter), so the word stays viable.
  bool step(Cursor& c, char ch, bool listed_next = false) {
    LineContext& ctx = *c.ctx;
    switch (c.phase) {
      case Cursor::kItemStart:
      case Cursor::kAfterOpen: {
        const Options& o = options(ctx, *c.node);
        // '[' opens a list after a space; ']' closes an empty one right after '['.
        if ((ch == '[' && c.phase == Cursor::kItemStart) || (ch == ']' && c.phase == Cursor::kAfterOpen)) {
          Node* next = child(ctx, *c.node, std::string(1, ch));
          if (next == nullptr) return false;
          c.node = next;
          c.phase = ch == '[' ? Cursor::kAfterOpen : Cursor::kAfterClose;
          return true;
        }
        if (ch == ' ' || ch == '\n' || ch == ']') return false;
        c.start_word(o, ch);
        c.phase = Cursor::kInWord;
        c.bare = o.any_string && bare_prefix_viable(c.word);
        if (c.bare) return true;
        std::vector<int8_t>& known = c.node->first_byte_viable;
        if (known.empty()) known.assign(256, -1);
        int8_t& viable = known[static_cast<unsigned char>(ch)];
        if (viable < 0) viable = word_viable(o, c) ? 1 : 0;
        return viable == 1;
      }
      case Cursor::kInWord: {
        if (c.bare && bare_word_char(ch)) {
          c.word.push_back(ch);
          return true;  // word_viable's bare-word branch
        }
        c.bare = false;  // not a bare word any more (or never was)
        const bool in_string = c.word[0] == '"' && !quoted_closed(c.word);
        if (!in_string && (ch == ' ' || ch == '\n' || ch == ']')) {
          Node* next = child(ctx, *c.node, c.word);
          if (next == nullptr) return false;
          c.node = next;
          c.word.clear();
          return after_item(c, ch);
        }
        c.word.push_back(ch);
        if (listed_next) return true;  // listed_prefix would narrow to a non-empty range
        return word_viable(options(ctx, *c.node), c);
      }
      case Cursor::kAfterClose:
        return after_item(c, ch);
      case Cursor::kLineEnd: {
        // A line starts with a mnemonic: nothing else needs the next line's state.
        if (!is_lower(ch)) return false;
        LineContext* next = next_line(c);
        if (next == nullptr) return false;
        c = Cursor{next, &next->root, {}, Cursor::kItemStart};
        return step(c, ch);
      }
    }
    return false;
  }

  // Whether every completion of a feasible position writes another item: its next slot
  // is required. Then a space is allowed without analysing the position yet (the walk
  // tries many words a model will not write; their positions are analysed on demand).
  static bool must_continue(const Position& pos) {
    if (pos.kind == nullptr || pos.decision || pos.list_open || !pos.elems.empty()) return false;
    if (pos.slot >= pos.kind->slots.size()) return false;
    const SlotSchema& slot = pos.kind->slots[pos.slot];
    return slot.default_kind == DefaultKind::kRequired && slot.shape != SlotShape::kRest;
  }

  // After a committed word or a closing bracket: a separator, a bracket or the line end.
  bool after_item(Cursor& c, char ch) {
    LineContext& ctx = *c.ctx;
    if (ch == ' ' && must_continue(c.node->pos)) {
      c.phase = Cursor::kItemStart;
      return true;
    }
    if (ch == ' ') {
      c.phase = Cursor::kItemStart;
      // Whether anything follows, without analysing every next word yet (the walk tries
      // many words a model will not write).
      if (c.node->options != nullptr) return c.node->options->continuable();
      return ctx.oracle->has_continuation(c.node->pos);
    }
    const Options& o = options(ctx, *c.node);
    if (ch == '\n') {
      c.phase = Cursor::kLineEnd;
      return o.end_line;
    }
    if (ch == ']' && c.phase != Cursor::kAfterClose && c.node->pos.list_open) {
      Node* next = child(ctx, *c.node, "]");
      if (next == nullptr) return false;
      c.node = next;
      c.phase = Cursor::kAfterClose;
      return true;
    }
    return false;
  }

  // The context after the line the cursor just ended (walks that cross a newline).
  std::unordered_map<const Node*, std::unique_ptr<LineContext>> lookahead;
  LineContext* next_line(const Cursor& c) {
    auto it = lookahead.find(c.node);
    if (it != lookahead.end()) return it->second.get();
    std::shared_ptr<ReplayState> st;
    std::unique_ptr<LineContext> ctx;
    if (c.ctx->oracle->line_valid(c.node->pos, &st)) ctx = make_context(std::move(st), 0);
    LineContext* raw = ctx.get();
    lookahead.emplace(c.node, std::move(ctx));
    return raw;
  }

  // Which kinds have applicable operands depends only on the IR and on the blocks and
  // loops that random variables name. When a line changed neither (a lookup or a sample
  // naming objects already named), the next line start's mnemonics are the same. When it
  // left the IR as it was but named new objects, a kind that applied still applies (its
  // completion names the same objects in the same IR): only the others are judged
  // again. When it annotated a block under a key no primitive reads
  // (schedule::block_annotation_is_read; Unannotate reads any), every kind but Unannotate
  // has the same completions with the same outcomes.
  void reuse_line_start(LineContext& before, LineContext& after, const Position& line) {
    const schedule::Schedule& a = before.state->sch;
    const schedule::Schedule& b = after.state->sch;
    if (!a.func().same_as(b.func())) {
      if (shortcuts && annotates_block_harmlessly(line)) {
        rejudge_line_start(before, after,
                           [](const KindSchema& k) { return k.kind == schedule::InstructionKind::Unannotate; });
      }
      return;
    }
    const Options& prev = options(before, before.root);
    auto judged_again = [&](const KindSchema& k) {
      return !std::binary_search(prev.words.begin(), prev.words.end(), std::string(k.mnemonic));
    };
    std::vector<const void*> named;
    for (const schedule::RandomVar& rv : before.state->vars[0]) {
      if (a.is_valid(rv)) named.push_back(a.get(schedule::BlockRV{rv.id}));
    }
    for (const schedule::RandomVar& rv : before.state->vars[1]) {
      if (a.is_valid(rv)) named.push_back(a.get(schedule::LoopRV{rv.id}));
    }
    for (size_t t = 0; t < 2; ++t) {
      const auto& vars = after.state->vars[t];
      for (size_t i = before.state->vars[t].size(); i < vars.size(); ++i) {
        // A location mark: compute_at may now apply.
        if (!b.is_valid(vars[i])) {
          if (shortcuts) rejudge_line_start(before, after, judged_again);
          return;
        }
        const void* node = t == 0 ? static_cast<const void*>(b.get(schedule::BlockRV{vars[i].id}))
                                  : static_cast<const void*>(b.get(schedule::LoopRV{vars[i].id}));
        if (std::find(named.begin(), named.end(), node) == named.end()) {
          if (shortcuts) rejudge_line_start(before, after, judged_again);
          return;
        }
      }
    }
    after.root.options = &prev;
  }

  // Whether `line` annotates a block under a key that no primitive reads.
  static bool annotates_block_harmlessly(const Position& line) {
    if (line.kind == nullptr || line.kind->kind != schedule::InstructionKind::Annotate || line.values.size() < 2)
      return false;
    const auto* target = line.values[0].as<schedule::RandomVar>();
    const auto* key = line.values[1].as<std::string>();
    return target != nullptr && target->type == schedule::RVType::kBlock && key != nullptr &&
           !schedule::block_annotation_is_read(*key);
  }

  // The previous line start's mnemonics, with those `again` selects judged on the new
  // state.
  template <typename Again>
  void rejudge_line_start(LineContext& before, LineContext& after, const Again& again) {
    Options o = options(before, before.root);
    for (const KindSchema& k : all_kind_schemas()) {
      if (!again(k)) continue;
      const std::string word(k.mnemonic);
      o.words.erase(std::remove(o.words.begin(), o.words.end(), word), o.words.end());
      Position q;
      q.kind = &k;
      q.text = word;
      if (after.oracle->feasible(q)) o.words.push_back(word);
    }
    std::sort(o.words.begin(), o.words.end());
    after.root.options = &after.oracle->seed_options(after.root.pos, std::move(o));
  }

  // Brings `contexts` to the complete lines of `text`; returns the cursor at the start of
  // the partial line after feeding it, or nullopt when the prefix is not viable.
  std::optional<Cursor> sync(std::string_view text) {
    const size_t complete = text.rfind('\n') == std::string_view::npos ? 0 : text.rfind('\n') + 1;
    // Keep the contexts whose lines are a prefix of the new text: those that end before
    // the first byte where it differs from the lines known (one comparison, not one per
    // line: a generation loop asks once per token of a script of hundreds of lines).
    const size_t common = static_cast<size_t>(
        std::mismatch(complete_text.begin(), complete_text.end(), text.begin(),
                      text.begin() + static_cast<std::ptrdiff_t>(std::min(text.size(), complete_text.size())))
            .first -
        complete_text.begin());
    const size_t agreed = std::min(common, complete);
    size_t keep = 1;
    while (keep < contexts.size() && contexts[keep]->text_end <= agreed) ++keep;
    if (keep < contexts.size()) {
      contexts.resize(keep);
      lookahead.clear();
    }
    complete_text.resize(contexts.back()->text_end);
    // Replay the new complete lines one by one.
    while (contexts.back()->text_end < complete) {
      LineContext& ctx = *contexts.back();
      const size_t start = ctx.text_end;
      const size_t end = text.find('\n', start);
      Cursor c{&ctx, &ctx.root, {}, Cursor::kItemStart};
      for (size_t i = start; i < end; ++i) {
        if (!step(c, text[i])) return std::nullopt;
      }
      // The newline: the line must be valid; then its state becomes the next context.
      if (!step(c, '\n')) return std::nullopt;
      std::shared_ptr<ReplayState> st;
      if (!ctx.oracle->line_valid(c.node->pos, &st)) return std::nullopt;
      ++lines_applied;
      contexts.push_back(make_context(std::move(st), end + 1));
      reuse_line_start(ctx, *contexts.back(), c.node->pos);
      complete_text.append(text.substr(start, end + 1 - start));
      lookahead.clear();
    }
    LineContext& ctx = *contexts.back();
    Cursor c{&ctx, &ctx.root, {}, Cursor::kItemStart};
    for (size_t i = complete; i < text.size(); ++i) {
      if (!step(c, text[i])) return std::nullopt;
    }
    return c;
  }

  // One cursor per trie depth (the longest token's length), reused across siblings:
  // copies keep their capacity. Sized once: the recursion holds references into it.
  std::vector<Cursor> walk_cursors;
  // Per trie node: whether every byte below it is a bare-word character, and for those
  // nodes the tokens strictly below. Where a bare word is being typed and any string may
  // come (Cursor::bare), each of those tokens is accepted character by character, so the
  // walk takes them all at once.
  std::vector<uint8_t> bare_below;
  std::vector<std::vector<TokenId>> tokens_below;
  // Per trie node: when every byte below it is a digit (digits are bare-word characters,
  // so tokens_below lists those tokens), the most digits below it; -1 otherwise. Where
  // any int64 may come and the word is an integer without a leading zero, each of those
  // tokens keeps it one while it has at most 18 digits (Impl::int_viable), so the walk
  // takes them all at once too.
  std::vector<int8_t> digits_depth_below;
  void index_bare_subtrees() {
    const auto& trie = tokenizer.trie();
    bare_below.assign(trie.size(), 0);
    tokens_below.assign(trie.size(), {});
    digits_depth_below.assign(trie.size(), -1);
    // Post-order, without recursion: (node, next child to visit).
    std::vector<std::pair<int32_t, size_t>> stack = {{0, 0}};
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < trie[node].children.size()) {
        const int32_t child = trie[node].children[next++].second;
        stack.emplace_back(child, 0);
        continue;
      }
      bool pure = true;
      for (const auto& [byte, child] : trie[node].children) {
        pure &= bare_word_char(static_cast<char>(byte)) && bare_below[child];
      }
      bare_below[node] = pure;
      int digits_depth = 0;
      for (const auto& [byte, child] : trie[node].children) {
        if (byte < '0' || byte > '9' || digits_depth_below[child] < 0) {
          digits_depth = -1;
          break;
        }
        digits_depth = std::max(digits_depth, 1 + digits_depth_below[child]);
      }
      digits_depth_below[node] = static_cast<int8_t>(std::min(digits_depth, 100));
      if (pure) {
        for (const auto& [byte, child] : trie[node].children) {
          if (trie[child].token >= 0) tokens_below[node].push_back(trie[child].token);
          tokens_below[node].insert(tokens_below[node].end(), tokens_below[child].begin(), tokens_below[child].end());
        }
      }
      stack.pop_back();
    }
  }

  void walk(int32_t trie_node, const Cursor& cursor, std::vector<TokenId>& out, size_t depth = 0) {
    const auto& trie = tokenizer.trie();
    // Inside a word where only listed words may come (no unbounded class), a byte that
    // no listed word has next cannot be stepped into (word_viable would refuse it): only
    // those bytes and the separators are tried. So too where numbers may come but the
    // word does not start like one (a variable name among split factors): no number
    // spelling starts with a byte other than a digit or '-'. (Where a number is being
    // typed, most bytes tried are digits: the filter would not pay for itself.)
    std::bitset<256> next_bytes;
    bool filtered = false;
    if (cursor.phase == Cursor::kInWord && !cursor.bare && cursor.node->options != nullptr) {
      const Options& o = *cursor.node->options;
      const char first = cursor.word[0];
      const bool number_start = (first >= '0' && first <= '9') || first == '-';
      if (!o.any_string && ((!o.any_int && !o.any_float) || !number_start)) {
        filtered = true;
        const auto [lo, hi] = cursor.listed_range(o);
        const size_t k = cursor.word.size();
        for (uint32_t i = lo; i < hi; ++i) {
          if (o.words[i].size() > k) next_bytes.set(static_cast<unsigned char>(o.words[i][k]));
        }
        next_bytes.set(static_cast<unsigned char>(' '));
        next_bytes.set(static_cast<unsigned char>('\n'));
        next_bytes.set(static_cast<unsigned char>(']'));
      }
    }
    // One copy of the cursor per trie node; between children it is cut back (a step
    // changes the word by at most one byte at its end, or empties it).
    Cursor& c = walk_cursors[depth];
    c = cursor;
    const size_t word_size = cursor.word.size();
    for (const auto& [byte, child_node] : trie[trie_node].children) {
      if (filtered && !next_bytes.test(static_cast<unsigned char>(byte))) continue;
      c.restore(cursor, word_size);
      // Past the filter, a byte other than a separator continues some listed word.
      const bool listed_next = filtered && byte != ' ' && byte != '\n' && byte != ']';
      if (!step(c, static_cast<char>(byte), listed_next)) continue;
      if (trie[child_node].token >= 0) out.push_back(trie[child_node].token);
      if (c.phase == Cursor::kInWord && c.bare && bare_below[child_node]) {
        out.insert(out.end(), tokens_below[child_node].begin(), tokens_below[child_node].end());
        continue;
      }
      if (c.phase == Cursor::kInWord && digits_depth_below[child_node] >= 0 &&
          stays_unbounded_int(c, static_cast<size_t>(digits_depth_below[child_node]))) {
        out.insert(out.end(), tokens_below[child_node].begin(), tokens_below[child_node].end());
        continue;
      }
      walk(child_node, walk_cursors[depth], out, depth + 1);
    }
  }

  std::vector<uint8_t> marks;  // per token id, for ordering large answers
  std::vector<TokenId> allowed(std::string_view text) {
    std::optional<Cursor> cursor = sync(text);
    std::vector<TokenId> out;
    if (!cursor) return out;
    walk(0, *cursor, out);
    if (cursor->phase == Cursor::kItemStart && cursor->node == &cursor->ctx->root) {
      out.push_back(tokenizer.special(SpecialToken::kEos));
    }
    // Sorted ids: a large set is cheaper to order through a mark per vocabulary entry.
    if (out.size() < 256) {
      std::sort(out.begin(), out.end());
      return out;
    }
    marks.assign(tokenizer.size(), 0);
    for (TokenId id : out) marks[static_cast<size_t>(id)] = 1;
    out.clear();
    for (size_t id = 0; id < marks.size(); ++id) {
      if (marks[id]) out.push_back(static_cast<TokenId>(id));
    }
    return out;
  }
};

ConstrainedDecoder::ConstrainedDecoder(const Tokenizer& tokenizer, ir::PrimFunc workload,
                                       ConstrainedDecoderSettings settings)
    : impl_(std::make_unique<Impl>(tokenizer, std::move(workload), settings.shortcuts)) {}

ConstrainedDecoder::~ConstrainedDecoder() = default;

std::vector<TokenId> ConstrainedDecoder::allowed_tokens(std::span<const TokenId> script_prefix) {
  // Decoding concatenates token texts: a prefix that extends the last one decodes only
  // its new tokens (a generation loop asks once per token).
  Impl& d = *impl_;
  const size_t known = d.decoded_ids.size();
  const bool extends = script_prefix.size() >= known &&
                       std::equal(d.decoded_ids.begin(), d.decoded_ids.end(), script_prefix.begin());
  std::string added;
  try {
    added = d.tokenizer.decode(script_prefix.subspan(extends ? known : 0));
  } catch (const UserError&) {
    return {};  // a special token inside the script: nothing can follow
  }
  // Extended in place: the ids and text so far are not copied again per token.
  if (extends) {
    d.decoded_ids.insert(d.decoded_ids.end(), script_prefix.begin() + static_cast<std::ptrdiff_t>(known),
                         script_prefix.end());
    d.decoded_text += added;
  } else {
    d.decoded_ids.assign(script_prefix.begin(), script_prefix.end());
    d.decoded_text = std::move(added);
  }
  return d.allowed(d.decoded_text);
}

std::vector<TokenId> ConstrainedDecoder::allowed_tokens_after(std::string_view script_text) {
  return impl_->allowed(script_text);
}

bool ConstrainedDecoder::is_viable(std::string_view script_text) { return impl_->sync(script_text).has_value(); }

bool ConstrainedDecoder::is_complete(std::string_view script_text) { return scheduled_function(script_text).has_value(); }

std::optional<ir::PrimFunc> ConstrainedDecoder::scheduled_function(std::string_view script_text) {
  auto cursor = impl_->sync(script_text);
  if (!cursor || cursor->phase != Impl::Cursor::kItemStart || cursor->node != &cursor->ctx->root) return std::nullopt;
  return cursor->ctx->state->sch.func();
}

ConstrainedDecoder::Stats ConstrainedDecoder::stats() const {
  return Stats{impl_->lines_applied, impl_->counters.positions, impl_->counters.trials};
}

}  // namespace dragon::decode
