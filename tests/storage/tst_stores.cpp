// Every store's create/read/update/delete, the passage tree and its current path
// (continue, retry, alternatives, undo, branches), state invalidation on edit, world
// info and window layouts.
#include "connection.h"
#include "verify_ok.h"

#include "titled_story.h"

#include <baton/storage/book_store.h>
#include <baton/storage/database.h>
#include <baton/storage/eval_store.h>
#include <baton/storage/generation_store.h>
#include <baton/storage/lore_store.h>
#include <baton/storage/model_store.h>
#include <baton/storage/prompt_state_store.h>
#include <baton/storage/run_store.h>
#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>
#include <baton/storage/topic_store.h>

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>

using namespace baton::storage;

namespace {

std::string texts(const std::vector<Passage>& path) {
    std::string s;
    for (const auto& p : path)
        s += p.text;
    return s;
}

StoredState makeState(int64_t passage, const std::string& model, int64_t offset) {
    StoredState s;
    s.passageId = passage;
    s.windowIndex = offset / 100;
    s.tokenOffset = offset;
    s.modelIdentity = model;
    s.window = 128;
    s.overlap = 16;
    s.formatVersion = 1;
    s.blob.assign(static_cast<size_t>(64 + offset % 7), static_cast<uint8_t>(offset));
    return s;
}

} // namespace

class TestStores : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::unique_ptr<Database> m_db;

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        auto db = Database::open((m_tmp.path() + "/stores.db").toStdString());
        BATON_VERIFY_OK(db);
        m_db = std::move(*db);
    }

    void storyCrud() {
        Story s;
        s.title = "A title — with ünïcode";
        s.mode = StoryMode::Adventure;
        s.modelPath = "/models/x";
        s.settingsJson = R"({"temperature":0.7,"window":128})";
        s.memory = "memory";
        s.authorsNote = "note";
        auto id = m_db->stories().create(s);
        BATON_VERIFY_OK(id);
        auto got = m_db->stories().get(*id);
        BATON_VERIFY_OK(got);
        QCOMPARE(got->title, s.title);
        QCOMPARE(got->mode, StoryMode::Adventure);
        QCOMPARE(got->modelPath, s.modelPath);
        QCOMPARE(got->settingsJson, s.settingsJson);
        QCOMPARE(got->memory, s.memory);
        QCOMPARE(got->authorsNote, s.authorsNote);
        QCOMPARE(got->currentPassageId, int64_t(0));
        QVERIFY(got->createdAt > 0 && got->updatedAt == got->createdAt);

        got->title = "Renamed";
        got->mode = StoryMode::Story;
        BATON_VERIFY_OK(m_db->stories().update(*got));
        QCOMPARE(m_db->stories().get(*id)->title, std::string("Renamed"));
        QCOMPARE(m_db->stories().get(*id)->mode, StoryMode::Story);

        // Settings must be JSON; an unknown id is NotFound.
        Story bad = s;
        bad.settingsJson = "{not json";
        auto refused = m_db->stories().create(bad);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code, StorageErrorCode::Constraint);
        QCOMPARE(m_db->stories().get(999999).error().code, StorageErrorCode::NotFound);

        QTest::qSleep(3); // times have millisecond resolution: make the order certain
        auto second = m_db->stories().create(titled("Second"));
        BATON_VERIFY_OK(second);
        auto list = m_db->stories().list();
        BATON_VERIFY_OK(list);
        QVERIFY(list->size() >= 2);
        QCOMPARE(list->front().id, *second); // newest change first
        QTest::qSleep(3);
        BATON_VERIFY_OK(m_db->stories().append(*id, "touch", PassageAuthor::User));
        QCOMPARE(m_db->stories().list()->front().id, *id);

        BATON_VERIFY_OK(m_db->stories().remove(*second));
        QCOMPARE(m_db->stories().get(*second).error().code, StorageErrorCode::NotFound);
        QCOMPARE(m_db->stories().remove(*second).error().code, StorageErrorCode::NotFound);
    }

    void treeAndCurrentPath() {
        auto& st = m_db->stories();
        const int64_t story = *st.create(titled("Tree"));
        QCOMPARE(*st.currentText(story), std::string());
        const int64_t a = *st.append(story, "Once. ", PassageAuthor::User);
        const int64_t b = *st.append(story, "Then B. ", PassageAuthor::Model); // continue
        QCOMPARE(st.get(story)->currentPassageId, b);
        QCOMPARE(*st.currentText(story), std::string("Once. Then B. "));
        // Retry: an alternative to b under the same parent, made current.
        const int64_t b2 = *st.addPassage(story, a, "Then B2. ", PassageAuthor::Model);
        QCOMPARE(*st.currentText(story), std::string("Once. Then B2. "));
        const int64_t c2 = *st.append(story, "C2.", PassageAuthor::User);
        auto alternatives = st.children(story, a);
        BATON_VERIFY_OK(alternatives);
        QCOMPARE(alternatives->size(), size_t(2));
        QCOMPARE((*alternatives)[0].id, b);
        QCOMPARE((*alternatives)[1].id, b2);
        auto path = st.currentPath(story);
        BATON_VERIFY_OK(path);
        QCOMPARE(path->size(), size_t(3));
        QCOMPARE((*path)[0].parentId, int64_t(0));
        QCOMPARE((*path)[2].id, c2);
        QCOMPARE((*path)[1].author, PassageAuthor::Model);
        // Branch: switch back to the first alternative; the other branch is kept.
        BATON_VERIFY_OK(st.setCurrent(story, b));
        QCOMPARE(*st.currentText(story), std::string("Once. Then B. "));
        QCOMPARE(texts(*st.path(c2)), std::string("Once. Then B2. C2."));
        // Undo moves up; undo at a root leaves the story empty.
        QCOMPARE(*st.undo(story), a);
        QCOMPARE(*st.currentText(story), std::string("Once. "));
        QCOMPARE(*st.undo(story), int64_t(0));
        QCOMPARE(*st.currentText(story), std::string());
        QCOMPARE(*st.undo(story), int64_t(0));
        // A second root is an alternative opening.
        const int64_t root2 = *st.addPassage(story, 0, "Another start.", PassageAuthor::User);
        QCOMPARE(st.children(story, 0)->size(), size_t(2));
        QCOMPARE(*st.currentText(story), std::string("Another start."));
        QCOMPARE(*st.passageCount(story), int64_t(5));

        // Passages cannot cross stories.
        const int64_t other = *st.create(titled("Other"));
        auto cross = st.addPassage(other, b, "x", PassageAuthor::User);
        QVERIFY(!cross.ok());
        QCOMPARE(cross.error().code, StorageErrorCode::Constraint);
        QCOMPARE(st.setCurrent(other, b).error().code, StorageErrorCode::Constraint);
        QCOMPARE(st.addPassage(story, 987654, "x", PassageAuthor::User).error().code,
                 StorageErrorCode::NotFound);

        // Removing a subtree that holds the current leaf moves it to the parent.
        BATON_VERIFY_OK(st.setCurrent(story, c2));
        BATON_VERIFY_OK(st.removePassage(b2));
        QCOMPARE(st.get(story)->currentPassageId, a);
        QCOMPARE(st.passage(c2).error().code, StorageErrorCode::NotFound);
        QCOMPARE(*st.passageCount(story), int64_t(3));
        (void)root2;

        // Deleting a story deletes its passages (and their states).
        BATON_VERIFY_OK(m_db->states().save(makeState(a, "m", 5)));
        BATON_VERIFY_OK(st.remove(story));
        QCOMPARE(connectionOf(*m_db).queryInt("SELECT count(*) FROM passages WHERE story_id = " +
                                              std::to_string(story)),
                 int64_t(0));
        QCOMPARE(connectionOf(*m_db).queryInt("SELECT count(*) FROM state_blobs b LEFT JOIN "
                                              "recurrent_states s ON s.id = b.state_id WHERE "
                                              "s.id IS NULL"),
                 int64_t(0));
        QCOMPARE(connectionOf(*m_db).queryText("PRAGMA foreign_key_check"), std::string());
    }

    void longChainsWork() {
        // A deep tree (a long story saved chunk by chunk) loads and deletes: no
        // recursion limit is hit.
        auto& st = m_db->stories();
        const int64_t story = *st.create(titled("Long"));
        BATON_VERIFY_OK(m_db->transaction([&]() -> Result<void> {
            for (int i = 0; i < 3000; ++i)
                if (auto r = st.append(story, std::to_string(i % 10), PassageAuthor::Model); !r)
                    return r.error();
            return {};
        }));
        auto text = st.currentText(story);
        BATON_VERIFY_OK(text);
        QCOMPARE(text->size(), size_t(3000));
        QCOMPARE(text->substr(0, 12), std::string("012345678901"));
        BATON_VERIFY_OK(st.remove(story));
    }

    void duplicateSearchAndAllPassages() {
        Story s;
        s.title = "Original";
        s.memory = "The memory";
        s.authorsNote = "A note";
        s.settingsJson = R"({"window":128})";
        auto id = m_db->stories().create(s);
        BATON_VERIFY_OK(id);
        auto a = m_db->stories().append(*id, "The dragon 100% slept. ", PassageAuthor::User);
        LoreEntry dragon;
        dragon.storyId = *id;
        dragon.keys = {"dragon"};
        dragon.content = "The dragon is old.";
        const int64_t entry = *m_db->lore().add(dragon);
        auto generation = m_db->generations().begin(
            *id, *a, R"({"seed":5})", R"([{"id":)" + std::to_string(entry) + R"(,"key":"x"}])");
        BATON_VERIFY_OK(generation);
        auto b = m_db->stories().addPassage(*id, *a, "It woke. ", PassageAuthor::Model, true,
                                            *generation);
        auto alt =
            m_db->stories().addPassage(*id, *a, "A_secret branch. ", PassageAuthor::Model, false);
        BATON_VERIFY_OK(a);
        BATON_VERIFY_OK(b);
        BATON_VERIFY_OK(alt);
        BATON_VERIFY_OK(m_db->states().save(makeState(*b, "m1", 140)));

        auto all = m_db->stories().allPassages(*id);
        BATON_VERIFY_OK(all);
        QCOMPARE(all->size(), size_t(3));
        QCOMPARE((*all)[0].id, *a);
        QCOMPARE((*all)[2].parentId, *a);

        auto copy = m_db->stories().duplicate(*id, "Copy");
        BATON_VERIFY_OK(copy);
        QVERIFY(*copy != *id);
        auto c = m_db->stories().get(*copy);
        BATON_VERIFY_OK(c);
        QCOMPARE(c->title, std::string("Copy"));
        QCOMPARE(c->memory, std::string("The memory"));
        QCOMPARE(c->authorsNote, std::string("A note"));
        QCOMPARE(c->settingsJson, std::string(R"({"window":128})"));
        auto copyPath = m_db->stories().currentPath(*copy);
        BATON_VERIFY_OK(copyPath);
        QCOMPARE(texts(*copyPath), std::string("The dragon 100% slept. It woke. "));
        QVERIFY(copyPath->back().id != *b);
        auto copyAll = m_db->stories().allPassages(*copy);
        BATON_VERIFY_OK(copyAll);
        QCOMPARE(copyAll->size(), size_t(3));
        // The state came along, on the copied passage, with its blob.
        auto st = m_db->states().latestOnPath(copyPath->back().id, "m1", 128, 16, 1);
        BATON_VERIFY_OK(st);
        QVERIFY(st->has_value());
        QCOMPARE((*st)->passageId, copyPath->back().id);
        QCOMPARE((*st)->blob, makeState(*b, "m1", 140).blob);
        // The generation came along: its own row, continuing the copy's first passage.
        const int64_t copiedGeneration = copyPath->back().generationId;
        QVERIFY(copiedGeneration != 0 && copiedGeneration != *generation);
        auto g = m_db->generations().get(copiedGeneration);
        BATON_VERIFY_OK(g);
        QCOMPARE(g->storyId, *copy);
        QCOMPARE(g->parentId, copyPath->front().id);
        QCOMPARE(g->settingsJson, std::string(R"({"seed":5})"));
        // The world info came along, and the generation names the copied entry.
        auto copiedLore = m_db->lore().list(*copy);
        BATON_VERIFY_OK(copiedLore);
        QCOMPARE(copiedLore->size(), size_t(1));
        QVERIFY(copiedLore->front().id != entry);
        QCOMPARE(copiedLore->front().content, std::string("The dragon is old."));
        QCOMPARE(g->loreJson,
                 R"([{"id":)" + std::to_string(copiedLore->front().id) + R"(,"key":"x"}])");
        // A generation cannot continue another story's passage.
        QCOMPARE(m_db->generations().begin(*copy, *a, "{}").error().code,
                 StorageErrorCode::Constraint);
        // The original is untouched.
        auto orig = m_db->stories().currentPath(*id);
        BATON_VERIFY_OK(orig);
        QCOMPARE(orig->back().id, *b);

        // Search: titles and text on any branch, case-insensitive, % and _ literal.
        auto hits = m_db->stories().search("DRAGON 100%");
        BATON_VERIFY_OK(hits);
        QCOMPARE(hits->size(), size_t(2)); // the copy (newer) first
        QCOMPARE(hits->front(), *copy);
        hits = m_db->stories().search("a_secret");
        BATON_VERIFY_OK(hits);
        QCOMPARE(hits->size(), size_t(2));
        hits = m_db->stories().search("a%secret");
        BATON_VERIFY_OK(hits);
        QCOMPARE(hits->size(), size_t(0));
        hits = m_db->stories().search("ORIGINAL");
        BATON_VERIFY_OK(hits);
        QCOMPARE(hits->size(), size_t(1));
        QCOMPARE(hits->front(), *id);
        QVERIFY(!m_db->stories().duplicate(987654, "x").ok());
        BATON_VERIFY_OK(m_db->stories().remove(*copy));
        BATON_VERIFY_OK(m_db->stories().remove(*id));
    }

    void topicModels() {
        auto& t = m_db->topics();
        TopicModelRecord r;
        r.path = "/tmp/a.json";
        r.name = "A";
        r.topics = 20;
        r.vocabularySize = 1000;
        r.summary = "three books";
        const int64_t a = *t.add(r);
        r.topics = 10; // fitted again to the same file: the record is replaced
        QCOMPARE(*t.add(r), a);
        QCOMPARE((*t.byPath("/tmp/a.json"))->topics, 10);
        r.path = "/tmp/b.json";
        const int64_t b = *t.add(r);
        QVERIFY(b != a);
        QCOMPARE(t.list()->size(), size_t(2));
        BATON_VERIFY_OK(t.remove(a));
        QCOMPARE(t.remove(a).error().code, StorageErrorCode::NotFound);
        QVERIFY(!t.byPath("/tmp/a.json")->has_value());
        r.topics = 0; // refused by the schema
        r.path = "/tmp/c.json";
        QCOMPARE(t.add(r).error().code, StorageErrorCode::Constraint);
        BATON_VERIFY_OK(t.remove(b));
    }

    void statesArePrunedToOnePerFinishedWindow() {
        auto& st = m_db->stories();
        auto& states = m_db->states();
        const int64_t story = *st.create(titled("Pruned"));
        // Offsets 10, 20, 30 lie in window 0 (makeState: window = offset / 100); 110 in 1.
        const int64_t a = *st.append(story, "a", PassageAuthor::Model);
        const int64_t b = *st.append(story, "b", PassageAuthor::Model);
        const int64_t c = *st.append(story, "c", PassageAuthor::Model);
        const int64_t d = *st.append(story, "d", PassageAuthor::Model);
        BATON_VERIFY_OK(states.save(makeState(a, "m", 10)));
        BATON_VERIFY_OK(states.save(makeState(b, "m", 20)));
        BATON_VERIFY_OK(states.save(makeState(b, "other-model", 20)));
        BATON_VERIFY_OK(states.save(makeState(c, "m", 30)));
        // The open window keeps every state (an edit in it resumes from the chunk before).
        QCOMPARE(*states.pruneAncestors(makeState(c, "m", 30)), int64_t(0));
        QCOMPARE(states.forPassage(a)->size(), size_t(1));
        // A state in the next window prunes window 0 to its deepest state.
        BATON_VERIFY_OK(states.save(makeState(d, "m", 110)));
        QCOMPARE(*states.pruneAncestors(makeState(d, "m", 110)), int64_t(2)); // a's and b's
        QVERIFY(states.forPassage(a)->empty());
        QCOMPARE(states.forPassage(b)->size(), size_t(1)); // another model's stays
        QCOMPARE(states.forPassage(c)->size(), size_t(1));
        QCOMPARE(*states.pruneAncestors(makeState(d, "m", 110)), int64_t(0));
        // A branch point keeps its state: c gets a second child, then a deeper state in
        // c's window on one branch leaves c's state for the other branch.
        const int64_t e = *st.addPassage(story, c, "e", PassageAuthor::Model, true);
        BATON_VERIFY_OK(states.save(makeState(e, "m", 40)));
        QCOMPARE(*states.pruneAncestors(makeState(e, "m", 40)), int64_t(0));
        QCOMPARE(states.forPassage(c)->size(), size_t(1));
        QCOMPARE((*states.latestOnPath(d, "m", 128, 16, 1))->passageId, d);
        QCOMPARE((*states.latestOnPath(e, "m", 128, 16, 1))->passageId, e);
        // A state made with the memory in every window (layout 1) is found and pruned
        // only under that layout.
        // It continues e, in e's window.
        StoredState pinned = makeState(*st.append(story, "f", PassageAuthor::Model), "m", 45);
        pinned.layout = 1;
        BATON_VERIFY_OK(states.save(pinned));
        QCOMPARE((*states.latestOnPath(pinned.passageId, "m", 128, 16, 1))->passageId, e);
        QCOMPARE((*states.latestOnPath(pinned.passageId, "m", 128, 16, 1, 1))->passageId,
                 pinned.passageId);
        QCOMPARE((*states.latestOnPath(pinned.passageId, "m", 128, 16, 1, 1))->layout, 1);
        QVERIFY(!states.latestOnPath(d, "m", 128, 16, 1, 1)->has_value());
        QCOMPARE(*states.pruneAncestors(pinned), int64_t(0)); // e's is another layout's
        QCOMPARE(states.forPassage(e)->size(), size_t(1));
        QCOMPARE(connectionOf(*m_db).queryInt("SELECT count(*) FROM state_blobs"),
                 connectionOf(*m_db).queryInt("SELECT count(*) FROM recurrent_states"));
    }

    void promptStatesKeepTheMostRecentWithinTheirSize() {
        auto& p = m_db->promptStates();
        const std::vector<uint8_t> kb(1000, 7);
        BATON_VERIFY_OK(p.save("m/128/0", "aa", 128, kb, 10000));
        BATON_VERIFY_OK(p.save("m/128/0", "bb", 256, kb, 10000));
        BATON_VERIFY_OK(p.save("other/128/0", "aa", 128, kb, 10000));
        QCOMPARE(*p.lengths("m/128/0"), (std::vector<int64_t>{256, 128}));
        QCOMPARE(p.find("m/128/0", "aa", 128)->value(), kb);
        QVERIFY(!p.find("m/128/0", "aa", 256)->has_value()); // another length
        QVERIFY(!p.find("m/64/0", "aa", 128)->has_value());  // another owner
        QVERIFY(*p.exists("m/128/0", "bb", 256));
        QVERIFY(!*p.exists("m/128/0", "bb", 128));
        // An owner's most recently used first ("aa" was just found).
        QCOMPARE(p.recent("m/128/0", 5)->size(), size_t(2));
        QCOMPARE(p.recent("m/128/0", 1)->size(), size_t(1));
        QCOMPARE(p.recent("m/128/0", 1)->front(), kb);
        QVERIFY(p.recent("nobody", 4)->empty());
        // Replaced, not added.
        BATON_VERIFY_OK(p.save("m/128/0", "aa", 128, std::vector<uint8_t>(500, 1), 10000));
        QCOMPARE(*p.totalBytes(), int64_t(2500));
        // Over the size: the least recently used go ("bb" was used longest ago).
        QTest::qSleep(2); // distinct use times (milliseconds)
        QVERIFY(p.find("other/128/0", "aa", 128)->has_value());
        QTest::qSleep(2);
        BATON_VERIFY_OK(p.save("m/128/0", "cc", 384, kb, 2600));
        QVERIFY(!p.find("m/128/0", "bb", 256)->has_value());
        QVERIFY(*p.totalBytes() <= 2600);
        QVERIFY(p.find("m/128/0", "cc", 384)->has_value()); // the newest stays
        BATON_VERIFY_OK(p.remove("m/128/0", "cc", 384));
        QVERIFY(!p.find("m/128/0", "cc", 384)->has_value());
        // A state larger than the whole size still stays, alone.
        BATON_VERIFY_OK(p.save("m/128/0", "dd", 512, std::vector<uint8_t>(5000, 2), 100));
        QCOMPARE(*p.totalBytes(), int64_t(5000));
        BATON_VERIFY_OK(p.remove("m/128/0", "dd", 512));
    }

    void worldInfo() {
        auto& lore = m_db->lore();
        const int64_t story = *m_db->stories().create(titled("Lore"));
        LoreEntry e;
        e.storyId = story;
        e.keys = {"Elinor", "Miss Dashwood"};
        e.secondaryKeys = {"Norland"};
        e.content = "Elinor is the elder sister — ünïcode.";
        e.order = 20;
        e.scanDepth = 64;
        const int64_t first = *lore.add(e);
        e.keys = {"Marianne"};
        e.secondaryKeys = {};
        e.order = 10;
        e.enabled = false;
        const int64_t second = *lore.add(e);
        auto listed = lore.list(story);
        BATON_VERIFY_OK(listed);
        QCOMPARE(listed->size(), size_t(2));
        QCOMPARE(listed->front().id, second); // placed in ascending order
        QVERIFY(!listed->front().enabled);
        const LoreEntry& back = listed->back();
        QCOMPARE(back.keys, (std::vector<std::string>{"Elinor", "Miss Dashwood"}));
        QCOMPARE(back.secondaryKeys, std::vector<std::string>{"Norland"});
        QCOMPARE(back.content, std::string("Elinor is the elder sister — ünïcode."));
        QCOMPARE(back.scanDepth, 64);
        QVERIFY(back.createdAt > 0 && back.updatedAt >= back.createdAt);

        LoreEntry changed = *lore.get(first);
        changed.order = 5;
        changed.content = "Changed.";
        changed.enabled = false;
        BATON_VERIFY_OK(lore.update(changed));
        QCOMPARE(lore.list(story)->front().id, first);
        QCOMPARE(lore.get(first)->content, std::string("Changed."));
        QVERIFY(!lore.get(first)->enabled);

        // Refused: no key, a scan depth below one token, an unknown id or story.
        LoreEntry bad = changed;
        bad.keys = {""};
        QCOMPARE(lore.update(bad).error().code, StorageErrorCode::InvalidArgument);
        bad.keys = {"k"};
        bad.scanDepth = 0;
        QCOMPARE(lore.add(bad).error().code, StorageErrorCode::InvalidArgument);
        bad.scanDepth = 10;
        bad.id = 987654;
        QCOMPARE(lore.update(bad).error().code, StorageErrorCode::NotFound);
        QCOMPARE(lore.remove(987654).error().code, StorageErrorCode::NotFound);
        QCOMPARE(lore.get(987654).error().code, StorageErrorCode::NotFound);
        bad.storyId = 987654;
        QCOMPARE(lore.add(bad).error().code, StorageErrorCode::Constraint);

        BATON_VERIFY_OK(lore.remove(second));
        QCOMPARE(lore.list(story)->size(), size_t(1));
        // Deleting the story deletes its entries.
        BATON_VERIFY_OK(m_db->stories().remove(story));
        QCOMPARE(connectionOf(*m_db).queryInt(
                     "SELECT count(*) FROM lore_entries WHERE story_id = " + std::to_string(story)),
                 int64_t(0));
    }

    // Undoing an edit puts back the text, the author and the states the edit deleted
    // (blobs and all); states made from the edited text since go, and a state of a
    // passage that is gone meanwhile is not brought back.
    void anEditIsTakenBackWithItsStates() {
        auto& st = m_db->stories();
        auto& states = m_db->states();
        const int64_t story = *st.create(titled("Undo an edit"));
        const int64_t p1 = *st.append(story, "one ", PassageAuthor::User);
        const int64_t p2 = *st.append(story, "two ", PassageAuthor::Model);
        const int64_t p3 = *st.append(story, "three ", PassageAuthor::Model);
        const int64_t p3b = *st.addPassage(story, p2, "three-b ", PassageAuthor::Model, false);
        for (const auto& [p, off] :
             std::vector<std::pair<int64_t, int>>{{p1, 10}, {p2, 20}, {p3, 30}, {p3b, 31}})
            BATON_VERIFY_OK(states.save(makeState(p, "model-a", off)));
        auto before = *states.takeFrom(p1, true); // the whole story's, to compare with
        BATON_VERIFY_OK(states.restore(before));
        const int64_t editedBefore = st.passage(p2)->editedAt;

        ReplacedPassage replaced;
        QCOMPARE(*st.editPassage(p2, "TWO ", false, &replaced), int64_t(3));
        QCOMPARE(replaced.passageId, p2);
        QCOMPARE(replaced.text, std::string("two "));
        QCOMPARE(replaced.author, PassageAuthor::Model);
        QCOMPARE(replaced.states.size(), size_t(3));
        QCOMPARE(*states.countForStory(story), int64_t(1));
        // After the edit: a state made from the edited text, and a branch removed.
        BATON_VERIFY_OK(states.save(makeState(p3, "model-a", 35)));
        BATON_VERIFY_OK(st.removePassage(p3b));

        QCOMPARE(*st.undoEdit(replaced), int64_t(2)); // p2's and p3's; p3b is gone
        QCOMPARE(*st.currentText(story), std::string("one two three "));
        QCOMPARE(st.passage(p2)->author, PassageAuthor::Model);
        QCOMPARE(st.passage(p2)->editedAt, editedBefore);
        auto after = *states.takeFrom(p1, true);
        BATON_VERIFY_OK(states.restore(after));
        before.erase(std::remove_if(before.begin(), before.end(),
                                    [&](const StoredState& s) { return s.passageId == p3b; }),
                     before.end());
        QCOMPARE(after.size(), before.size());
        for (size_t i = 0; i < after.size(); ++i) {
            QCOMPARE(after[i].passageId, before[i].passageId);
            QCOMPARE(after[i].tokenOffset, before[i].tokenOffset); // p3's 30, not 35
            QCOMPARE(after[i].createdAt, before[i].createdAt);
            QCOMPARE(after[i].blob, before[i].blob);
        }
        QCOMPARE(connectionOf(*m_db).queryInt("SELECT count(*) FROM state_blobs"),
                 connectionOf(*m_db).queryInt("SELECT count(*) FROM recurrent_states"));
    }

    void statesAndInvalidation() {
        auto& st = m_db->stories();
        auto& states = m_db->states();
        const int64_t story = *st.create(titled("States"));
        const int64_t p1 = *st.append(story, "one ", PassageAuthor::User);
        const int64_t p2 = *st.append(story, "two ", PassageAuthor::Model);
        const int64_t p3 = *st.append(story, "three ", PassageAuthor::Model);
        const int64_t p3b = *st.addPassage(story, p2, "three-b ", PassageAuthor::Model, false);
        const int64_t p4 = *st.append(story, "four", PassageAuthor::Model);
        const std::vector<std::pair<int64_t, int>> saved = {
            {p1, 10}, {p2, 20}, {p3, 30}, {p3b, 31}, {p4, 40}};
        for (const auto& [p, off] : saved)
            BATON_VERIFY_OK(states.save(makeState(p, "model-a", off)));
        BATON_VERIFY_OK(states.save(makeState(p4, "model-b", 40))); // another model, same passage
        QCOMPARE(*states.countForStory(story), int64_t(6));

        // The deepest matching state on the path, with its blob.
        auto latest = states.latestOnPath(p4, "model-a", 128, 16, 1);
        BATON_VERIFY_OK(latest);
        QVERIFY(latest->has_value());
        QCOMPARE((*latest)->passageId, p4);
        QCOMPARE((*latest)->tokenOffset, int64_t(40));
        QCOMPARE((*latest)->blob, makeState(p4, "model-a", 40).blob);
        QVERIFY(!states.latestOnPath(p4, "model-c", 128, 16, 1)->has_value());
        QVERIFY(!states.latestOnPath(p4, "model-a", 256, 16, 1)->has_value()); // other T
        QVERIFY(!states.latestOnPath(p4, "model-a", 128, 0, 1)->has_value());  // other o
        QVERIFY(!states.latestOnPath(p4, "model-a", 128, 16, 2)->has_value()); // other format
        // On the other branch the state of p3b is found, never p3's or p4's.
        QCOMPARE((*states.latestOnPath(p3b, "model-a", 128, 16, 1))->passageId, p3b);

        // Saving again for the same keys replaces (one row, new blob).
        StoredState again = makeState(p4, "model-a", 41);
        BATON_VERIFY_OK(states.save(again));
        QCOMPARE(states.forPassage(p4)->size(), size_t(2));
        QCOMPARE((*states.latestOnPath(p4, "model-a", 128, 16, 1))->tokenOffset, int64_t(41));

        // Editing p2 invalidates the states of p2 and of every descendant (p3, p3b,
        // p4 twice) but not p1's.
        auto removed = st.editPassage(p2, "TWO ");
        BATON_VERIFY_OK(removed);
        QCOMPARE(*removed, int64_t(5));
        QCOMPARE(states.forPassage(p1)->size(), size_t(1));
        QVERIFY(states.forPassage(p2)->empty());
        QVERIFY(states.forPassage(p3)->empty());
        QVERIFY(states.forPassage(p3b)->empty());
        QVERIFY(states.forPassage(p4)->empty());
        QCOMPARE((*states.latestOnPath(p4, "model-a", 128, 16, 1))->passageId, p1);
        QCOMPARE(*st.currentText(story), std::string("one TWO three four"));
        QCOMPARE(st.passage(p2)->author, PassageAuthor::Edit);
        QVERIFY(st.passage(p2)->editedAt > 0);
        QCOMPARE(connectionOf(*m_db).queryInt("SELECT count(*) FROM state_blobs"),
                 connectionOf(*m_db).queryInt("SELECT count(*) FROM recurrent_states"));
        // Editing a leaf touches only the leaf.
        BATON_VERIFY_OK(states.save(makeState(p4, "model-a", 40)));
        BATON_VERIFY_OK(states.save(makeState(p3, "model-a", 30)));
        QCOMPARE(*st.editPassage(p4, "FOUR"), int64_t(1));
        QCOMPARE(states.forPassage(p3)->size(), size_t(1));
        // States need an existing passage.
        QCOMPARE(states.save(makeState(123456789, "m", 1)).error().code,
                 StorageErrorCode::Constraint);

        // A new title or author's note keeps the states; a new memory (read before
        // every passage, story/prompt.h) deletes them all.
        Story s = *st.get(story);
        s.title = "States, renamed";
        s.authorsNote = "Keep it short.";
        BATON_VERIFY_OK(st.update(s));
        QCOMPARE(*states.countForStory(story), int64_t(2));
        s.memory = "The ship is called Tern.";
        BATON_VERIFY_OK(st.update(s));
        QCOMPARE(*states.countForStory(story), int64_t(0));
        QCOMPARE(connectionOf(*m_db).queryInt("SELECT count(*) FROM state_blobs"),
                 connectionOf(*m_db).queryInt("SELECT count(*) FROM recurrent_states"));
    }

    void booksAndCorpora() {
        auto& books = m_db->books();
        Book b{0, "Emma", "/books/emma.txt", "abc123", std::string(100000, 'e'), 0, 0};
        const int64_t emma = *books.add(b);
        const int64_t persuasion = *books.add(Book{0, "Persuasion", "", "def", "text", 0, 0});
        auto got = books.get(emma);
        BATON_VERIFY_OK(got);
        QCOMPARE(got->text, b.text);
        QCOMPARE(got->textBytes, int64_t(100000));
        QCOMPARE(got->checksum, std::string("abc123"));
        auto list = books.list();
        BATON_VERIFY_OK(list);
        QCOMPARE(list->size(), size_t(2));
        QVERIFY(list->front().text.empty()); // listed without texts
        QCOMPARE(list->front().title, std::string("Emma"));

        const int64_t corpus = *books.createCorpus("Austen", {persuasion, emma});
        QCOMPARE(books.corpus(corpus)->bookIds, (std::vector<int64_t>{persuasion, emma}));
        BATON_VERIFY_OK(books.setCorpusBooks(corpus, {emma}));
        QCOMPARE(books.corpus(corpus)->bookIds, (std::vector<int64_t>{emma}));
        QCOMPARE(books.createCorpus("Austen", {}).error().code, StorageErrorCode::Constraint);
        QCOMPARE(books.createCorpus("Bad", {424242}).error().code, StorageErrorCode::Constraint);
        QCOMPARE(books.corpora()->size(), size_t(1));
        // A book in a corpus cannot be deleted; out of it, it can.
        QCOMPARE(books.remove(emma).error().code, StorageErrorCode::Constraint);
        BATON_VERIFY_OK(books.removeCorpus(corpus));
        BATON_VERIFY_OK(books.remove(emma));
        QCOMPARE(books.get(emma).error().code, StorageErrorCode::NotFound);
        QCOMPARE(connectionOf(*m_db).queryInt("SELECT count(*) FROM book_texts"), int64_t(1));
    }

    void models() {
        auto& models = m_db->models();
        const int64_t a =
            *models.add(RegisteredModel{0, "/m/a", "A", "sum-a", R"({"n_layer":2})", true, 0});
        const int64_t b = *models.add(RegisteredModel{0, "/m/b", "B", "sum-b", "{}", false, 0});
        QCOMPARE((*models.defaultModel())->id, a);
        QCOMPARE(models.add(RegisteredModel{0, "/m/a", "dup", "", "{}", false, 0}).error().code,
                 StorageErrorCode::Constraint);
        BATON_VERIFY_OK(models.setDefault(b));
        QCOMPARE((*models.defaultModel())->id, b);
        QVERIFY(!models.get(a)->isDefault);
        // Registering a new default takes the flag over.
        const int64_t c = *models.add(RegisteredModel{0, "/m/c", "C", "", "{}", true, 0});
        QCOMPARE((*models.defaultModel())->id, c);
        QCOMPARE(connectionOf(*m_db).queryInt("SELECT count(*) FROM models WHERE is_default"),
                 int64_t(1));
        auto byPath = models.byPath("/m/a");
        BATON_VERIFY_OK(byPath);
        QCOMPARE((*byPath)->configJson, std::string(R"({"n_layer":2})"));
        RegisteredModel changed = *models.get(a);
        changed.checksum = "new";
        BATON_VERIFY_OK(models.update(changed));
        QCOMPARE(models.get(a)->checksum, std::string("new"));
        BATON_VERIFY_OK(models.setDefault(0));
        QVERIFY(!models.defaultModel()->has_value());
        QCOMPARE(models.list()->size(), size_t(3));
        BATON_VERIFY_OK(models.remove(c));
        QCOMPARE(models.list()->size(), size_t(2));
    }

    void runsAndMetrics() {
        auto& runs = m_db->runs();
        const int64_t model = (*m_db->models().byPath("/m/a"))->id;
        TrainingRun r;
        r.modelId = model;
        r.configJson = R"({"lr":0.0003})";
        r.checkpointPaths = {"/ckpt/1"};
        const int64_t id = *runs.create(r);
        BATON_VERIFY_OK(runs.setStatus(id, RunStatus::Running));
        BATON_VERIFY_OK(runs.addCheckpoint(id, "/ckpt/2"));
        std::vector<MetricPoint> points;
        for (int step = 0; step < 100; ++step) {
            points.push_back(MetricPoint{id, step, "train_loss", 5.0 - step * 0.01});
            if (step % 10 == 0)
                points.push_back(MetricPoint{id, step, "val_ppl", 100.0 - step});
        }
        BATON_VERIFY_OK(runs.addMetrics(points));
        BATON_VERIFY_OK(runs.addMetrics({MetricPoint{id, 0, "val_ppl", 99.5}})); // replaced
        auto loss = runs.metrics(id, "train_loss");
        BATON_VERIFY_OK(loss);
        QCOMPARE(loss->size(), size_t(100));
        QCOMPARE(loss->at(99).step, int64_t(99));
        QCOMPARE(loss->at(99).value, 5.0 - 99 * 0.01);
        auto ppl = runs.metrics(id, "val_ppl");
        QCOMPARE(ppl->size(), size_t(10));
        QCOMPARE(ppl->front().value, 99.5);
        QCOMPARE(runs.metrics(id)->size(), size_t(110));
        BATON_VERIFY_OK(runs.setStatus(id, RunStatus::Failed, "out of memory"));
        auto got = runs.get(id);
        BATON_VERIFY_OK(got);
        QCOMPARE(got->status, RunStatus::Failed);
        QCOMPARE(got->message, std::string("out of memory"));
        QCOMPARE(got->checkpointPaths, (std::vector<std::string>{"/ckpt/1", "/ckpt/2"}));
        QCOMPARE(got->modelId, model);
        QCOMPARE(runs.addMetrics({MetricPoint{777777, 1, "x", 1}}).error().code,
                 StorageErrorCode::Constraint);
        QCOMPARE(runs.list()->size(), size_t(1));
        BATON_VERIFY_OK(runs.remove(id));
        QCOMPARE(connectionOf(*m_db).queryInt("SELECT count(*) FROM metric_points"), int64_t(0));
    }

    void evalResults() {
        auto& evals = m_db->evals();
        EvalResult e;
        e.modelPath = "/m/b";
        e.textId = "emma.txt";
        e.textHash = "0123456789abcdef";
        e.window = 300;
        e.overlap = 50;
        e.scoredTokens = 12345;
        e.nll = 40000.5;
        e.tokenPpl = 25.5;
        e.wordPpl = 70.25;
        e.flopsPerToken = 2.9e8;
        e.seconds = 12.5;
        const int64_t id = *evals.add(e);
        EvalResult other = e;
        other.modelPath = "/m/a";
        BATON_VERIFY_OK(evals.add(other));
        auto got = evals.get(id);
        BATON_VERIFY_OK(got);
        QCOMPARE(got->scoredTokens, e.scoredTokens);
        QCOMPARE(got->nll, e.nll);
        QCOMPARE(got->wordPpl, e.wordPpl);
        QCOMPARE(got->flopsPerToken, e.flopsPerToken);
        QCOMPARE(got->window, 300);
        QCOMPARE(got->overlap, 50);
        QCOMPARE(evals.list("/m/b")->size(), size_t(1));
        QCOMPARE(evals.list()->size(), size_t(2));
        EvalResult bad = e;
        bad.window = 0;
        QCOMPARE(evals.add(bad).error().code, StorageErrorCode::Constraint);
        BATON_VERIFY_OK(evals.remove(id));
        QCOMPARE(evals.get(id).error().code, StorageErrorCode::NotFound);
    }

    void transactionGroupsAndRollsBack() {
        auto& st = m_db->stories();
        const int64_t story = *st.create(titled("Tx"));
        auto r = m_db->transaction([&]() -> Result<void> {
            if (auto a = st.append(story, "kept? ", PassageAuthor::User); !a)
                return a.error();
            return makeStorageError(StorageErrorCode::InvalidArgument, "changed my mind");
        });
        QVERIFY(!r.ok());
        QCOMPARE(*st.passageCount(story), int64_t(0));
        QCOMPARE(st.get(story)->currentPassageId, int64_t(0));
        QCOMPARE(*m_db->integrityCheck(), std::string("ok"));
    }
};

QTEST_GUILESS_MAIN(TestStores)
#include "tst_stores.moc"
