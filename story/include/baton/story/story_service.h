// Continuing a story: the one story engine that the app and baton-cli run (the
// server continues the text its clients send, not stories: server/README.md).
//
// A continuation saves the user's text (when there is any) as a passage, or moves
// back to where the last generation began (a retry); finds where to resume (the
// deepest saved state for the model and windows on the current path, else the
// beginning); reads what the model reads after it (prompt.h); generates, saving each
// chunk with the state after it under an explicit parent (one transaction each), as
// one recorded generation; and reports what it did. A saved state that cannot be used
// (another build, a damaged blob) is skipped: the path's text is read instead.
//
// A StoryService works on one Database and is used by one thread at a time. It keeps
// the generator of its last continuation: continuing the same path again (nothing
// typed, edited or switched meanwhile) reads no story text, only the guidance again
// where it moves.
#pragma once

#include "baton/story/error.h"
#include "baton/story/lore.h"
#include "baton/story/settings.h"
#include "baton/story/token_choices.h"

#include <baton/engine/cancel.h>
#include <baton/engine/generator.h>
#include <baton/engine/model.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace baton::storage {
class Database;
}

namespace baton::story {

struct ContinueRequest {
    int64_t storyId = 0;
    std::string userText; // saved first as the user's passage at the end of the path
    bool retry = false;   // an alternative to the last generation (nothing is deleted)
    // Branch first at a token, with one of its recorded alternatives (token_choices.h:
    // branchAtToken), and continue from there. Not with userText or retry.
    std::optional<TokenBranch> branch;
    StorySettings settings;
    int chunkTokens = 16; // a chunk (and a state) about every this many tokens
    // Alternatives recorded per generated token and saved with its passage (0-20; 0:
    // none).
    int alternatives = kRecordedAlternatives;
};

struct ContinueResult {
    engine::GenerationResult generation;
    int64_t generationId = 0;       // the recorded generation (0: nothing was saved)
    int64_t parentId = 0;           // the passage it continued (0: the beginning)
    int64_t lastPassageId = 0;      // its last saved chunk (the new end of the path)
    int64_t userPassageId = 0;      // the user's text, when there was any
    int64_t branchPassageId = 0;    // the branch at a token (ContinueRequest::branch)
    int64_t resumedFromPassage = 0; // whose saved state it started from (0: none)
    std::string readText;           // the story text read before generating (after the state)
    int64_t tokensRead = 0;         // tokens the model read before generating: the open
                                    // window again from a saved state, the text, the guidance
    LoreSelection lore;             // the world info that fired (placed entries were read)
    bool reusedGenerator = false;   // continued the last continuation's generator
    int64_t chunks = 0, states = 0; // saved
    size_t trimmedBytes = 0;        // cut back to a whole sentence (trimSentences)
    std::string notice;             // e.g. why a saved state was skipped
    // A chunk could not be saved: the text before it is saved, the generation stopped.
    std::optional<storage::StorageError> saveError;
};

class StoryService {
public:
    explicit StoryService(storage::Database& db);
    ~StoryService();

    // onToken sees every event of the generation (the text as it streams) and may
    // return false to stop; cancel stops it too. What was generated before a stop is
    // saved. A failure to save ends the generation with saveError set (the result is
    // still a success: the caller shows what is saved).
    Result<ContinueResult>
    continueStory(std::shared_ptr<const engine::Model> model, const ContinueRequest& request,
                  const std::function<bool(const engine::GenerationEvent&)>& onToken = {},
                  const engine::CancelToken& cancel = {});

    // Forgets the kept generator (the story changed in a way this service cannot see).
    void forgetGenerator();

    storage::Database& database() { return m_db; }

private:
    struct KeptGenerator;
    storage::Database& m_db;
    std::unique_ptr<KeptGenerator> m_kept; // the last continuation's generator
};

// A StoryService over its own connection to a database file, opened on first use by
// the thread that uses it: for clients whose storage and engine run on different
// threads (the app runs continuations on its engine thread; its storage thread keeps
// its own connection). SQLite's locking orders the two connections' writes.
class StoryServiceOnFile {
public:
    explicit StoryServiceOnFile(std::string databasePath);
    ~StoryServiceOnFile();
    const std::string& databasePath() const { return m_path; }
    Result<StoryService*> service();

private:
    std::string m_path;
    std::unique_ptr<storage::Database> m_db;
    std::unique_ptr<StoryService> m_service;
};

} // namespace baton::story
