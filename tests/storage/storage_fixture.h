// The sample data of the migration tests: written into a database of the current
// schema to make tests/storage/data/schema_vN.sql, and checked after a dump of an
// older version has been migrated. Touches every table.
#pragma once

#include <baton/storage/book_store.h>
#include <baton/storage/database.h>
#include <baton/storage/eval_store.h>
#include <baton/storage/generation_store.h>
#include <baton/storage/lore_store.h>
#include <baton/storage/model_store.h>
#include <baton/storage/prompt_state_store.h>
#include <baton/storage/recall_store.h>
#include <baton/storage/run_store.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>
#include <baton/storage/topic_store.h>

#include <string>

namespace baton::test {

inline std::vector<uint8_t> sampleBlob(int seed) {
    std::vector<uint8_t> b(300);
    for (size_t i = 0; i < b.size(); ++i)
        b[i] = static_cast<uint8_t>((i * 31 + static_cast<size_t>(seed) * 7) & 0xFF);
    return b;
}

// Returns "" on success, else what failed.
inline std::string fillSampleData(storage::Database& db) {
    using namespace storage;
    Story record;
    record.title = "Sample story";
    record.mode = StoryMode::Adventure;
    record.modelPath = "/models/tiny";
    record.settingsJson = R"({"temperature":0.8,"window":128})";
    record.memory = "Memory text";
    record.authorsNote = "Author's note";
    auto story = db.stories().create(record);
    if (!story)
        return describe(story.error());
    auto p1 = db.stories().append(*story, "It began. ", PassageAuthor::User);
    if (!p1)
        return "passages";
    LoreEntry entry;
    entry.storyId = *story;
    entry.keys = {"Elinor", "Miss Dashwood"};
    entry.secondaryKeys = {"Norland"};
    entry.content = "Elinor is the elder sister.";
    entry.order = 7;
    entry.scanDepth = 64;
    auto lore = db.lore().add(entry);
    if (!lore)
        return "lore";
    auto generation = db.generations().begin(*story, *p1, R"({"seed":3})",
                                             R"([{"id":)" + std::to_string(*lore) + "}]");
    if (!generation)
        return "generation";
    auto p2 = db.stories().addPassage(*story, *p1, "It went on — ünïcode. ", PassageAuthor::Model,
                                      true, *generation);
    auto alt = db.stories().addPassage(*story, *p1, "Another way. ", PassageAuthor::Model, false);
    auto p3 = db.stories().append(*story, "The end.", PassageAuthor::Edit);
    if (!p1 || !p2 || !alt || !p3)
        return "passages";
    StoredState s;
    s.passageId = *p2;
    s.windowIndex = 1;
    s.tokenOffset = 140;
    s.modelIdentity = "0123456789abcdef";
    s.window = 128;
    s.overlap = 16;
    s.formatVersion = 1;
    s.blob = sampleBlob(1);
    if (!db.states().save(s))
        return "state";
    s.passageId = *p3;
    s.layout = 1;
    s.blob = sampleBlob(2);
    if (!db.states().save(s))
        return "state with the memory in every window";
    if (!db.promptStates().save("0123456789abcdef/128/16", "00ff", 128, sampleBlob(3), 1 << 20))
        return "prompt state";
    auto book = db.books().add(Book{0, "Emma", "/books/emma.txt", "sum", "Emma Woodhouse.", 0, 0});
    if (!book || !db.books().createCorpus("Austen", {*book}))
        return "books";
    auto model = db.models().add(
        RegisteredModel{0, "/models/tiny", "Tiny", "msum", R"({"n_layer":2})", true, 0});
    if (!model)
        return "model";
    TrainingRun run;
    run.modelId = *model;
    run.configJson = R"({"steps":10})";
    run.status = RunStatus::Completed;
    run.checkpointPaths = {"/ckpt/a"};
    auto runId = db.runs().create(run);
    if (!runId ||
        !db.runs().addMetrics({{*runId, 1, "train_loss", 4.5}, {*runId, 2, "train_loss", 4.25}}))
        return "run";
    EvalResult e;
    e.modelId = *model;
    e.modelPath = "/models/tiny";
    e.textId = "emma.txt";
    e.textHash = "feedface";
    e.window = 128;
    e.overlap = 16;
    e.scoredTokens = 1000;
    e.nll = 3000.5;
    e.tokenPpl = 20.25;
    e.wordPpl = 50.5;
    e.flopsPerToken = 1.5e6;
    e.seconds = 0.75;
    if (!db.evals().add(e))
        return "eval";
    TopicModelRecord topics;
    topics.path = "/topics/austen.json";
    topics.name = "Austen, 20 topics";
    topics.topics = 20;
    topics.vocabularySize = 4106;
    topics.summary = "3 files";
    if (!db.topics().add(topics))
        return "topics";
    return {};
}

// Returns "" when the sample data is all there. dumpVersion: the schema version the
// data was written with (tables added later hold no sample rows).
inline std::string checkSampleData(storage::Database& db, int dumpVersion = 1 << 30) {
    using namespace storage;
    auto stories = db.stories().list();
    if (!stories || stories->size() != 1)
        return "stories";
    const Story& s = stories->front();
    if (s.title != "Sample story" || s.mode != StoryMode::Adventure || s.memory != "Memory text" ||
        s.authorsNote != "Author's note" || s.settingsJson != R"({"temperature":0.8,"window":128})")
        return "story fields";
    auto text = db.stories().currentText(s.id);
    if (!text || *text != "It began. It went on — ünïcode. The end.")
        return "story text: " + (text ? *text : describe(text.error()));
    auto path = db.stories().currentPath(s.id);
    if (!path || path->size() != 3 || (*path)[2].author != PassageAuthor::Edit)
        return "path";
    // Generations (v3): the model's passage belongs to one that continued the first.
    const int64_t generation = (*path)[1].generationId;
    if (dumpVersion >= 3) {
        auto g = db.generations().get(generation);
        if (!g || g->parentId != (*path)[0].id || g->settingsJson != R"({"seed":3})" ||
            g->storyId != s.id)
            return "generation";
    } else if (generation != 0) {
        return "generation of an old passage";
    }
    auto alternatives = db.stories().children(s.id, (*path)[0].id);
    if (!alternatives || alternatives->size() != 2)
        return "alternatives";
    auto state = db.states().latestOnPath(path->back().id, "0123456789abcdef", 128, 16, 1);
    if (!state || !*state || (*state)->passageId != (*path)[1].id ||
        (*state)->blob != sampleBlob(1) || (*state)->tokenOffset != 140 ||
        (*state)->windowIndex != 1)
        return "state";
    // World info and window layouts (v4).
    auto pinned = db.states().latestOnPath(path->back().id, "0123456789abcdef", 128, 16, 1, 1);
    if (!pinned || (pinned->has_value() != (dumpVersion >= 4)) ||
        (dumpVersion >= 4 &&
         ((*pinned)->passageId != (*path)[2].id || (*pinned)->blob != sampleBlob(2))))
        return "state with the memory in every window";
    auto lore = db.lore().list(s.id);
    if (!lore || lore->size() != (dumpVersion >= 4 ? 1u : 0u))
        return "lore entries";
    auto readLore = db.generations().get(generation);
    if (dumpVersion >= 4) {
        const LoreEntry& e = lore->front();
        if (e.keys != std::vector<std::string>{"Elinor", "Miss Dashwood"} ||
            e.secondaryKeys != std::vector<std::string>{"Norland"} ||
            e.content != "Elinor is the elder sister." || !e.enabled || e.order != 7 ||
            e.scanDepth != 64)
            return "lore entry fields";
        if (!readLore || readLore->loreJson != R"([{"id":)" + std::to_string(e.id) + "}]")
            return "the lore a generation read";
    } else if (dumpVersion >= 3 && (!readLore || readLore->loreJson != "[]")) {
        return "the lore of an old generation";
    }
    // Prompt states of the server (v5).
    auto prompt = db.promptStates().find("0123456789abcdef/128/16", "00ff", 128);
    if (!prompt || prompt->has_value() != (dumpVersion >= 5) ||
        (dumpVersion >= 5 && **prompt != sampleBlob(3)))
        return "prompt state";
    // The recall index (v7; older files are indexed when they are opened): diacritics
    // folded, the word as written reported, nothing left waiting.
    auto found = db.recall().search(s.id, {"unicode"}, 5);
    if (!found || found->size() != 1 || found->front().passageId != (*path)[1].id ||
        found->front().matched != std::vector<std::string>{"ünïcode"})
        return "recall index";
    if (auto waiting = db.recall().pending(); !waiting || *waiting != 0)
        return "passages waiting for the recall index";
    auto books = db.books().list();
    if (!books || books->size() != 1 ||
        db.books().get(books->front().id)->text != "Emma Woodhouse.")
        return "books";
    auto corpora = db.books().corpora();
    if (!corpora || corpora->size() != 1 || corpora->front().bookIds.size() != 1)
        return "corpora";
    auto model = db.models().defaultModel();
    if (!model || !*model || (*model)->path != "/models/tiny" ||
        (*model)->configJson != R"({"n_layer":2})")
        return "models";
    auto runs = db.runs().list();
    if (!runs || runs->size() != 1 || runs->front().status != RunStatus::Completed ||
        runs->front().checkpointPaths != std::vector<std::string>{"/ckpt/a"})
        return "runs";
    auto metrics = db.runs().metrics(runs->front().id, "train_loss");
    if (!metrics || metrics->size() != 2 || metrics->back().value != 4.25)
        return "metrics";
    auto evals = db.evals().list();
    if (!evals || evals->size() != 1 || evals->front().nll != 3000.5 ||
        evals->front().wordPpl != 50.5 || evals->front().modelId != (*model)->id)
        return "evals";
    auto topics = db.topics().list();
    if (!topics || topics->size() != (dumpVersion >= 2 ? 1u : 0u))
        return "topic models";
    if (dumpVersion >= 2 &&
        (topics->front().path != "/topics/austen.json" || topics->front().topics != 20 ||
         topics->front().vocabularySize != 4106))
        return "topic model fields";
    return {};
}

} // namespace baton::test
