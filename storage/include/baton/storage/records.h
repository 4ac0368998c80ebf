// Plain value records: what the stores read and write. No Qt, no SQLite; ids are
// the rows' INTEGER PRIMARY KEYs (0 = none / not yet stored); times are
// milliseconds since the Unix epoch (UTC).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace baton::storage {

// stored on disk: never renumber
enum class StoryMode : int { Story = 1, Adventure = 2 };
// stored on disk: never renumber
enum class PassageAuthor : int { User = 1, Model = 2, Edit = 3 };
// stored on disk: never renumber
enum class RunStatus : int { Pending = 1, Running = 2, Completed = 3, Failed = 4, Cancelled = 5 };

const char* storyModeName(StoryMode mode); // "story" / "adventure"
std::optional<StoryMode> storyModeFromName(const std::string& name);
const char* passageAuthorName(PassageAuthor author); // "user" / "model" / "edit"
const char* runStatusName(RunStatus status);         // "pending", "running", ...

struct Story {
    int64_t id = 0;
    std::string title;
    StoryMode mode = StoryMode::Story;
    std::string modelPath;           // the checkpoint folder the story generates with ("" = none)
    std::string settingsJson = "{}"; // generation settings (sampling, T, o) as a JSON object
    std::string memory;              // always-included background text
    std::string authorsNote;
    int64_t currentPassageId = 0; // the leaf of the current path; 0 = empty story
    int64_t createdAt = 0;
    int64_t updatedAt = 0;
};

// One node of a story's tree. Continue adds a child of the current leaf; retry and
// alternatives add siblings; undo moves the current leaf to the parent; a branch is
// any other leaf made current.
struct Passage {
    int64_t id = 0;
    int64_t storyId = 0;
    int64_t parentId = 0; // 0 = a root (the story's first passage or an alternative to it)
    std::string text;
    PassageAuthor author = PassageAuthor::User;
    int64_t createdAt = 0;
    int64_t editedAt = 0;     // 0 = never edited in place
    int64_t generationId = 0; // the model generation that wrote it (0: none, or before v3)
};

// One model generation of a story (schema v3): it continued passage parentId (0: the
// beginning) and wrote the passages that carry its id.
struct Generation {
    int64_t id = 0;
    int64_t storyId = 0;
    int64_t parentId = 0;
    std::string settingsJson = "{}"; // the settings it ran with
    std::string loreJson = "[]";     // the world-info entries it read (schema v4): a JSON
                                     // array of objects whose "id" is a LoreEntry's
    int64_t createdAt = 0;
};

// One world-info (lorebook) entry of a story (schema v4). The story layer decides
// when it is read (story/lore.h); storage keeps it.
struct LoreEntry {
    int64_t id = 0;
    int64_t storyId = 0;
    std::vector<std::string> keys;          // any one of them in the recent text triggers it
    std::vector<std::string> secondaryKeys; // when not empty, one of them must occur too
    std::string content;
    bool enabled = true;
    int order = 100;     // entries are placed in ascending order
    int scanDepth = 256; // how many tokens of recent text are searched for the keys
    int64_t createdAt = 0;
    int64_t updatedAt = 0;
};

// The engine's opaque recurrent-state blob and the keys it is found by. It holds the
// generator's state after the text of the path from the root to `passageId`.
struct StoredState {
    int64_t id = 0;
    int64_t passageId = 0;
    int64_t windowIndex = 0;   // index of the open window
    int64_t tokenOffset = 0;   // tokens in the stream at this point
    std::string modelIdentity; // the engine's model identity (content hash)
    int window = 0;            // T
    int overlap = 0;           // o
    int formatVersion = 0;     // the engine's state format version
    int layout = 0;            // what every window starts with (schema v4): 0 nothing,
                               // 1 the story's memory (story/prompt.h)
    int64_t createdAt = 0;
    std::vector<uint8_t> blob; // empty when listed without data
};

// What an edit in place replaced (StoryStore::editPassage), to put back on undo
// (StoryStore::undoEdit): the passage's text, author and edit time, and the recurrent
// states the edit deleted (of the passage and its descendants), blobs included.
struct ReplacedPassage {
    int64_t passageId = 0;
    std::string text;
    PassageAuthor author = PassageAuthor::User;
    int64_t editedAt = 0; // 0: it had not been edited before
    std::vector<StoredState> states;
};

struct Book {
    int64_t id = 0;
    std::string title;
    std::string sourcePath;
    std::string checksum; // of the text, as the caller computes it (e.g. SHA-256 hex)
    std::string text;     // empty when listed without text
    int64_t textBytes = 0;
    int64_t createdAt = 0;
};

struct Corpus {
    int64_t id = 0;
    std::string name;
    std::vector<int64_t> bookIds; // in the corpus's order
    int64_t createdAt = 0;
};

struct RegisteredModel {
    int64_t id = 0;
    std::string path; // checkpoint folder (unique)
    std::string name;
    std::string checksum;
    std::string configJson = "{}"; // a summary: layers, width, T, o, recurrent, ...
    bool isDefault = false;        // at most one model is the default
    int64_t createdAt = 0;
};

// A fitted topic model (LDA) saved as a file by the engine and registered here.
struct TopicModelRecord {
    int64_t id = 0;
    std::string path; // the topic model file (unique)
    std::string name;
    int topics = 0;
    int vocabularySize = 0;
    std::string summary; // what it was fitted on, and how
    int64_t createdAt = 0;
};

struct TrainingRun {
    int64_t id = 0;
    int64_t modelId = 0; // the base model, 0 = none registered
    std::string configJson = "{}";
    RunStatus status = RunStatus::Pending;
    std::vector<std::string> checkpointPaths; // in the order they were written
    std::string message;                      // why it failed, or a note
    int64_t createdAt = 0;
    int64_t updatedAt = 0;
};

struct MetricPoint {
    int64_t runId = 0;
    int64_t step = 0;
    std::string name; // "train_loss", "val_ppl", ...
    double value = 0;
};

struct EvalResult {
    int64_t id = 0;
    int64_t modelId = 0; // 0 when the model is not registered
    std::string modelPath;
    std::string textId;   // a file name or corpus name
    std::string textHash; // content hash of the evaluated text
    int window = 0;       // T
    int overlap = 0;      // o
    int64_t scoredTokens = 0;
    double nll = 0; // total negative log-likelihood (nats)
    double tokenPpl = 0;
    double wordPpl = 0;
    double flopsPerToken = 0;
    double seconds = 0;
    int64_t createdAt = 0;
};

} // namespace baton::storage
