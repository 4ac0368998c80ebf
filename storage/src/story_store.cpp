#include <baton/storage/state_store.h>
#include <baton/storage/story_store.h>

#include "connection.h"
#include "recall_index.h"
#include "statement.h"
#include "store_util.h"
#include "transaction.h"

#include <baton/common/json.h>

#include <unordered_map>

namespace baton::storage {

namespace {

// A generation's record of the world info it read, with the entries' ids mapped to
// their copies (StoryStore::duplicate).
std::string renumberLore(const std::string& loreJson,
                         const std::unordered_map<int64_t, int64_t>& ids) {
    auto read = baton::json::parse(loreJson, nullptr);
    if (!read || !read->is_array())
        return loreJson;
    for (auto& entry : *read)
        if (entry.is_object() && entry.contains("id") && entry["id"].is_number_integer())
            if (auto it = ids.find(entry["id"].get<int64_t>()); it != ids.end())
                entry["id"] = it->second;
    return read->dump();
}

constexpr const char* kStoryColumns =
    "id, title, mode, model_path, settings_json, memory, authors_note, current_passage_id, "
    "created_at, updated_at";
constexpr const char* kPassageColumns =
    "p.id, p.story_id, p.parent_id, p.author, p.text, p.created_at, p.edited_at, "
    "p.generation_id";

Story readStory(const Statement& s) {
    Story st;
    st.id = s.columnInt(0);
    st.title = s.columnText(1);
    st.mode = static_cast<StoryMode>(s.columnInt(2));
    st.modelPath = s.columnText(3);
    st.settingsJson = s.columnText(4);
    st.memory = s.columnText(5);
    st.authorsNote = s.columnText(6);
    st.currentPassageId = s.isNull(7) ? 0 : s.columnInt(7);
    st.createdAt = s.columnInt(8);
    st.updatedAt = s.columnInt(9);
    return st;
}

Passage readPassage(const Statement& s) {
    Passage p;
    p.id = s.columnInt(0);
    p.storyId = s.columnInt(1);
    p.parentId = s.isNull(2) ? 0 : s.columnInt(2);
    p.author = static_cast<PassageAuthor>(s.columnInt(3));
    p.text = s.columnText(4);
    p.createdAt = s.columnInt(5);
    p.editedAt = s.columnInt(6);
    p.generationId = s.isNull(7) ? 0 : s.columnInt(7);
    return p;
}

bool validMode(StoryMode m) {
    return m == StoryMode::Story || m == StoryMode::Adventure;
}

bool validAuthor(PassageAuthor a) {
    return a == PassageAuthor::User || a == PassageAuthor::Model || a == PassageAuthor::Edit;
}

void touch(Connection& db, int64_t storyId) {
    db.prepare("UPDATE stories SET updated_at = ?1 WHERE id = ?2")
        .bind(1, nowMs())
        .bind(2, storyId)
        .run();
}

int64_t storyOfPassage(Connection& db, int64_t passageId) {
    Statement s = db.prepare("SELECT story_id FROM passages WHERE id = ?1");
    s.bind(1, passageId);
    if (!s.step())
        throwNotFound("passage", passageId);
    return s.columnInt(0);
}

int64_t currentOf(Connection& db, int64_t storyId) {
    Statement s = db.prepare("SELECT current_passage_id FROM stories WHERE id = ?1");
    s.bind(1, storyId);
    if (!s.step())
        throwNotFound("story", storyId);
    return s.isNull(0) ? 0 : s.columnInt(0);
}

void setCurrentChecked(Connection& db, int64_t storyId, int64_t passageId) {
    if (passageId != 0 && storyOfPassage(db, passageId) != storyId)
        throw SqliteException(makeStorageError(StorageErrorCode::Constraint,
                                               "that passage belongs to another story",
                                               "passage " + std::to_string(passageId) +
                                                   " is not in story " + std::to_string(storyId)));
    db.prepare("UPDATE stories SET current_passage_id = ?1, updated_at = ?2 WHERE id = ?3")
        .bindId(1, passageId)
        .bind(2, nowMs())
        .bind(3, storyId)
        .run();
    if (db.changes() == 0)
        throwNotFound("story", storyId);
}

} // namespace

Result<int64_t> StoryStore::create(const Story& story) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        if (!validMode(story.mode))
            return makeStorageError(StorageErrorCode::InvalidArgument, "unknown story mode");
        const int64_t now = nowMs();
        Statement s = m_db.prepare(
            "INSERT INTO stories (title, mode, model_path, settings_json, memory, authors_note, "
            "created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)");
        s.bind(1, story.title)
            .bind(2, static_cast<int64_t>(story.mode))
            .bind(3, story.modelPath)
            .bind(4, story.settingsJson.empty() ? std::string("{}") : story.settingsJson)
            .bind(5, story.memory)
            .bind(6, story.authorsNote)
            .bind(7, now)
            .run();
        return m_db.lastInsertId();
    });
}

Result<Story> StoryStore::get(int64_t id) {
    return guard<Story>([&]() -> Result<Story> {
        Statement s =
            m_db.prepare(std::string("SELECT ") + kStoryColumns + " FROM stories WHERE id = ?1");
        s.bind(1, id);
        if (!s.step())
            throwNotFound("story", id);
        return readStory(s);
    });
}

Result<std::vector<Story>> StoryStore::list() {
    return guard<std::vector<Story>>([&]() -> Result<std::vector<Story>> {
        Statement s = m_db.prepare(std::string("SELECT ") + kStoryColumns +
                                   " FROM stories ORDER BY updated_at DESC, id DESC");
        std::vector<Story> out;
        while (s.step())
            out.push_back(readStory(s));
        return out;
    });
}

Result<void> StoryStore::update(const Story& story) {
    return guard<void>([&]() -> Result<void> {
        if (!validMode(story.mode))
            return makeStorageError(StorageErrorCode::InvalidArgument, "unknown story mode");
        Transaction t(m_db);
        Statement old = m_db.prepare("SELECT memory FROM stories WHERE id = ?1");
        old.bind(1, story.id);
        if (!old.step())
            throwNotFound("story", story.id);
        if (old.columnText(0) != story.memory) {
            // Every saved state was computed after the old memory (story/prompt.h).
            m_db.prepare("DELETE FROM recurrent_states WHERE passage_id IN "
                         "(SELECT id FROM passages WHERE story_id = ?1)")
                .bind(1, story.id)
                .run();
        }
        m_db.prepare("UPDATE stories SET title = ?1, mode = ?2, model_path = ?3, "
                     "settings_json = ?4, memory = ?5, authors_note = ?6, updated_at = ?7 "
                     "WHERE id = ?8")
            .bind(1, story.title)
            .bind(2, static_cast<int64_t>(story.mode))
            .bind(3, story.modelPath)
            .bind(4, story.settingsJson.empty() ? std::string("{}") : story.settingsJson)
            .bind(5, story.memory)
            .bind(6, story.authorsNote)
            .bind(7, nowMs())
            .bind(8, story.id)
            .run();
        t.commit();
        return {};
    });
}

Result<void> StoryStore::remove(int64_t id) {
    return guard<void>([&]() -> Result<void> {
        Transaction t(m_db);
        m_db.prepare("UPDATE stories SET current_passage_id = NULL WHERE id = ?1")
            .bind(1, id)
            .run();
        // Passages (one statement: the parent links are checked at its end) cascade
        // to their states and blobs.
        m_db.prepare("DELETE FROM passages WHERE story_id = ?1").bind(1, id).run();
        m_db.prepare("DELETE FROM stories WHERE id = ?1").bind(1, id).run();
        if (m_db.changes() == 0)
            throwNotFound("story", id);
        t.commit();
        return {};
    });
}

Result<int64_t> StoryStore::addPassage(int64_t storyId, int64_t parentId, const std::string& text,
                                       PassageAuthor author, bool makeCurrent,
                                       int64_t generationId) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        if (!validAuthor(author))
            return makeStorageError(StorageErrorCode::InvalidArgument, "unknown passage author");
        Transaction t(m_db);
        if (parentId != 0 && storyOfPassage(m_db, parentId) != storyId)
            return makeStorageError(StorageErrorCode::Constraint,
                                    "the parent passage belongs to another story",
                                    "passage " + std::to_string(parentId));
        m_db.prepare("INSERT INTO passages (story_id, parent_id, author, text, created_at, "
                     "generation_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
            .bind(1, storyId)
            .bindId(2, parentId)
            .bind(3, static_cast<int64_t>(author))
            .bind(4, text)
            .bind(5, nowMs())
            .bindId(6, generationId)
            .run();
        const int64_t id = m_db.lastInsertId();
        indexPassage(m_db, id);
        if (makeCurrent)
            setCurrentChecked(m_db, storyId, id);
        else
            touch(m_db, storyId);
        t.commit();
        return id;
    });
}

Result<int64_t> StoryStore::append(int64_t storyId, const std::string& text, PassageAuthor author) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        Transaction t(m_db);
        const int64_t parent = currentOf(m_db, storyId);
        auto id = addPassage(storyId, parent, text, author, true);
        if (!id)
            return id;
        t.commit();
        return id;
    });
}

Result<Passage> StoryStore::passage(int64_t id) {
    return guard<Passage>([&]() -> Result<Passage> {
        Statement s = m_db.prepare(std::string("SELECT ") + kPassageColumns +
                                   " FROM passages p WHERE p.id = ?1");
        s.bind(1, id);
        if (!s.step())
            throwNotFound("passage", id);
        return readPassage(s);
    });
}

Result<std::vector<Passage>> StoryStore::children(int64_t storyId, int64_t parentId) {
    return guard<std::vector<Passage>>([&]() -> Result<std::vector<Passage>> {
        Statement s = m_db.prepare(
            std::string("SELECT ") + kPassageColumns +
            " FROM passages p WHERE p.story_id = ?1 AND p.parent_id IS ?2 ORDER BY p.id");
        s.bind(1, storyId).bindId(2, parentId);
        std::vector<Passage> out;
        while (s.step())
            out.push_back(readPassage(s));
        return out;
    });
}

Result<std::vector<Passage>> StoryStore::path(int64_t leafId) {
    return guard<std::vector<Passage>>([&]() -> Result<std::vector<Passage>> {
        Statement s = m_db.prepare(
            std::string("WITH RECURSIVE chain(id, depth) AS (SELECT ?1, 0 UNION ALL "
                        "SELECT p.parent_id, c.depth + 1 FROM passages p JOIN chain c "
                        "ON p.id = c.id WHERE p.parent_id IS NOT NULL) SELECT ") +
            kPassageColumns + " FROM chain c JOIN passages p ON p.id = c.id ORDER BY c.depth DESC");
        s.bind(1, leafId);
        std::vector<Passage> out;
        while (s.step())
            out.push_back(readPassage(s));
        if (out.empty() && leafId != 0)
            throwNotFound("passage", leafId);
        return out;
    });
}

Result<std::vector<Passage>> StoryStore::currentPath(int64_t storyId) {
    return guard<std::vector<Passage>>([&]() -> Result<std::vector<Passage>> {
        const int64_t leaf = currentOf(m_db, storyId);
        if (leaf == 0)
            return std::vector<Passage>{};
        return path(leaf);
    });
}

Result<std::string> StoryStore::currentText(int64_t storyId) {
    auto p = currentPath(storyId);
    if (!p)
        return p.error();
    std::string text;
    for (const auto& passage : *p)
        text += passage.text;
    return text;
}

Result<void> StoryStore::setCurrent(int64_t storyId, int64_t passageId) {
    return guard<void>([&]() -> Result<void> {
        setCurrentChecked(m_db, storyId, passageId);
        return {};
    });
}

Result<int64_t> StoryStore::undo(int64_t storyId) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        Transaction t(m_db);
        const int64_t leaf = currentOf(m_db, storyId);
        if (leaf == 0)
            return int64_t{0};
        Statement s = m_db.prepare("SELECT parent_id FROM passages WHERE id = ?1");
        s.bind(1, leaf);
        const int64_t parent = (s.step() && !s.isNull(0)) ? s.columnInt(0) : 0;
        setCurrentChecked(m_db, storyId, parent);
        t.commit();
        return parent;
    });
}

Result<int64_t> StoryStore::editPassage(int64_t passageId, const std::string& text, bool keepAuthor,
                                        ReplacedPassage* replaced) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        Transaction t(m_db);
        const int64_t storyId = storyOfPassage(m_db, passageId);
        if (replaced) {
            Statement before =
                m_db.prepare("SELECT text, author, edited_at FROM passages WHERE id = ?1");
            before.bind(1, passageId);
            before.step();
            replaced->passageId = passageId;
            replaced->text = before.columnText(0);
            replaced->author = static_cast<PassageAuthor>(before.columnInt(1));
            replaced->editedAt = before.columnInt(2);
        }
        Statement update = m_db.prepare("UPDATE passages SET text = ?1, author = coalesce(?2, "
                                        "author), edited_at = ?3 WHERE id = ?4");
        update.bind(1, text).bind(3, nowMs()).bind(4, passageId);
        if (keepAuthor)
            update.bindNull(2);
        else
            update.bind(2, static_cast<int64_t>(PassageAuthor::Edit));
        update.run();
        indexPassage(m_db, passageId);
        auto states = StateStore(m_db).takeFrom(passageId, replaced != nullptr);
        if (!states)
            return states.error();
        const auto removed = static_cast<int64_t>(states->size());
        if (replaced)
            replaced->states = std::move(*states);
        touch(m_db, storyId);
        t.commit();
        return removed;
    });
}

Result<int64_t> StoryStore::undoEdit(const ReplacedPassage& replaced) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        Transaction t(m_db);
        const int64_t storyId = storyOfPassage(m_db, replaced.passageId);
        m_db.prepare("UPDATE passages SET text = ?1, author = ?2, edited_at = ?3 WHERE id = ?4")
            .bind(1, replaced.text)
            .bind(2, static_cast<int64_t>(replaced.author))
            .bind(3, replaced.editedAt)
            .bind(4, replaced.passageId)
            .run();
        indexPassage(m_db, replaced.passageId);
        // States made from the edited text since (a generation after the edit) go; those
        // the edit took come back.
        StateStore states(m_db);
        if (auto taken = states.takeFrom(replaced.passageId, false); !taken)
            return taken.error();
        auto restored = states.restore(replaced.states);
        if (!restored)
            return restored.error();
        touch(m_db, storyId);
        t.commit();
        return *restored;
    });
}

Result<void> StoryStore::removePassage(int64_t passageId) {
    return guard<void>([&]() -> Result<void> {
        Transaction t(m_db);
        const int64_t storyId = storyOfPassage(m_db, passageId);
        const int64_t leaf = currentOf(m_db, storyId);
        Statement inSub =
            m_db.prepare(std::string(kSubtree) + "SELECT count(*) FROM sub WHERE id = ?2");
        inSub.bind(1, passageId).bind(2, leaf);
        inSub.step();
        if (leaf != 0 && inSub.columnInt(0) > 0) {
            Statement parent = m_db.prepare("SELECT parent_id FROM passages WHERE id = ?1");
            parent.bind(1, passageId);
            parent.step();
            setCurrentChecked(m_db, storyId, parent.isNull(0) ? 0 : parent.columnInt(0));
        }
        // One statement: the parent links inside the subtree are checked at its end.
        m_db.prepare(std::string(kSubtree) +
                     "DELETE FROM passages WHERE id IN (SELECT id FROM sub)")
            .bind(1, passageId)
            .run();
        touch(m_db, storyId);
        t.commit();
        return {};
    });
}

Result<int64_t> StoryStore::passageCount(int64_t storyId) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        Statement s = m_db.prepare("SELECT count(*) FROM passages WHERE story_id = ?1");
        s.bind(1, storyId);
        s.step();
        return s.columnInt(0);
    });
}

Result<std::vector<Passage>> StoryStore::allPassages(int64_t storyId) {
    return guard<std::vector<Passage>>([&]() -> Result<std::vector<Passage>> {
        currentOf(m_db, storyId); // NotFound for an unknown story
        Statement s = m_db.prepare(std::string("SELECT ") + kPassageColumns +
                                   " FROM passages p WHERE p.story_id = ?1 ORDER BY p.id");
        s.bind(1, storyId);
        std::vector<Passage> out;
        while (s.step())
            out.push_back(readPassage(s));
        return out;
    });
}

Result<int64_t> StoryStore::duplicate(int64_t storyId, const std::string& title) {
    return guard<int64_t>([&]() -> Result<int64_t> {
        Transaction t(m_db);
        auto story = get(storyId);
        if (!story)
            return story.error();
        Story copy = *story;
        copy.title = title;
        auto created = create(copy);
        if (!created)
            return created.error();
        const int64_t newId = *created;
        // The world info, then the generations, which name the entries they read
        // (their parents are mapped below, once the passages are).
        std::unordered_map<int64_t, int64_t> lore;
        {
            Statement s = m_db.prepare("SELECT id FROM lore_entries WHERE story_id = ?1");
            s.bind(1, storyId);
            while (s.step()) {
                m_db.prepare("INSERT INTO lore_entries (story_id, keys_json, "
                             "secondary_keys_json, content, enabled, sort_order, scan_depth, "
                             "created_at, updated_at) SELECT ?1, keys_json, secondary_keys_json, "
                             "content, enabled, sort_order, scan_depth, created_at, updated_at "
                             "FROM lore_entries WHERE id = ?2")
                    .bind(1, newId)
                    .bind(2, s.columnInt(0))
                    .run();
                lore[s.columnInt(0)] = m_db.lastInsertId();
            }
        }
        std::unordered_map<int64_t, int64_t> generations;
        {
            Statement s = m_db.prepare("SELECT id, settings_json, created_at, lore_json FROM "
                                       "generations WHERE story_id = ?1 ORDER BY id");
            s.bind(1, storyId);
            while (s.step()) {
                m_db.prepare("INSERT INTO generations (story_id, settings_json, created_at, "
                             "lore_json) VALUES (?1, ?2, ?3, ?4)")
                    .bind(1, newId)
                    .bind(2, s.columnText(1))
                    .bind(3, s.columnInt(2))
                    .bind(4, renumberLore(s.columnText(3), lore))
                    .run();
                generations[s.columnInt(0)] = m_db.lastInsertId();
            }
        }
        // Parents have smaller ids than their children, so one pass in id order maps
        // every parent before it is needed.
        std::unordered_map<int64_t, int64_t> mapped;
        {
            Statement s = m_db.prepare(
                "SELECT id, parent_id, author, text, created_at, edited_at, generation_id FROM "
                "passages WHERE story_id = ?1 ORDER BY id");
            s.bind(1, storyId);
            while (s.step()) {
                const int64_t parent = s.isNull(1) ? 0 : s.columnInt(1);
                const int64_t generation = s.isNull(6) ? 0 : s.columnInt(6);
                m_db.prepare("INSERT INTO passages (story_id, parent_id, author, text, "
                             "created_at, edited_at, generation_id) VALUES (?1, ?2, ?3, ?4, ?5, "
                             "?6, ?7)")
                    .bind(1, newId)
                    .bindId(2, parent ? mapped.at(parent) : 0)
                    .bind(3, s.columnInt(2))
                    .bind(4, s.columnText(3))
                    .bind(5, s.columnInt(4))
                    .bind(6, s.columnInt(5))
                    .bindId(7, generation ? generations.at(generation) : 0)
                    .run();
                mapped[s.columnInt(0)] = m_db.lastInsertId();
                indexPassage(m_db, mapped[s.columnInt(0)]);
                m_db.prepare("INSERT INTO token_choices (passage_id, data) SELECT ?1, data "
                             "FROM token_choices WHERE passage_id = ?2")
                    .bind(1, mapped[s.columnInt(0)])
                    .bind(2, s.columnInt(0))
                    .run();
            }
        }
        {
            Statement s = m_db.prepare("SELECT id, parent_id FROM generations WHERE story_id = "
                                       "?1 AND parent_id IS NOT NULL");
            s.bind(1, storyId);
            while (s.step()) {
                const auto parent = mapped.find(s.columnInt(1));
                m_db.prepare("UPDATE generations SET parent_id = ?1 WHERE id = ?2")
                    .bindId(1, parent == mapped.end() ? 0 : parent->second)
                    .bind(2, generations.at(s.columnInt(0)))
                    .run();
            }
        }
        // The states, with their blobs.
        {
            Statement s =
                m_db.prepare("SELECT r.id, r.passage_id FROM recurrent_states r JOIN passages p "
                             "ON p.id = r.passage_id WHERE p.story_id = ?1 ORDER BY r.id");
            s.bind(1, storyId);
            while (s.step()) {
                const int64_t oldState = s.columnInt(0);
                m_db.prepare("INSERT INTO recurrent_states (passage_id, window_index, "
                             "token_offset, model_identity, window_size, overlap, "
                             "format_version, created_at, layout) SELECT ?1, window_index, "
                             "token_offset, model_identity, window_size, overlap, "
                             "format_version, created_at, layout FROM recurrent_states WHERE "
                             "id = ?2")
                    .bind(1, mapped.at(s.columnInt(1)))
                    .bind(2, oldState)
                    .run();
                const int64_t newState = m_db.lastInsertId();
                m_db.prepare("INSERT INTO state_blobs (state_id, data) SELECT ?1, data FROM "
                             "state_blobs WHERE state_id = ?2")
                    .bind(1, newState)
                    .bind(2, oldState)
                    .run();
            }
        }
        if (story->currentPassageId)
            setCurrentChecked(m_db, newId, mapped.at(story->currentPassageId));
        t.commit();
        return newId;
    });
}

Result<std::vector<int64_t>> StoryStore::search(const std::string& text) {
    return guard<std::vector<int64_t>>([&]() -> Result<std::vector<int64_t>> {
        // LIKE with an escape character, so that % and _ in the text match themselves.
        std::string pattern = "%";
        for (char c : text) {
            if (c == '%' || c == '_' || c == '\\')
                pattern += '\\';
            pattern += c;
        }
        pattern += '%';
        Statement s = m_db.prepare(
            "SELECT s.id FROM stories s WHERE s.title LIKE ?1 ESCAPE '\\' OR EXISTS (SELECT 1 "
            "FROM passages p WHERE p.story_id = s.id AND p.text LIKE ?1 ESCAPE '\\') "
            "ORDER BY s.updated_at DESC, s.id DESC");
        s.bind(1, pattern);
        std::vector<int64_t> out;
        while (s.step())
            out.push_back(s.columnInt(0));
        return out;
    });
}

} // namespace baton::storage
