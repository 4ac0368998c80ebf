// Stories and their passages. A story is a tree of passages; the current path is
// the chain of parents from the story's current leaf up to a root.
#pragma once

#include "baton/storage/error.h"
#include "baton/storage/records.h"

#include <string>
#include <vector>

namespace baton::storage {

class Connection;

class StoryStore {
public:
    explicit StoryStore(Connection& connection)
        : m_db(connection) {}

    // Inserts story (id, times and current passage are set by the store); returns the id.
    Result<int64_t> create(const Story& story);
    Result<Story> get(int64_t id);
    // Every story, most recently updated first.
    Result<std::vector<Story>> list();
    // Saves title, mode, model, settings, memory and author's note. A changed memory
    // deletes the story's saved states (they were computed after the old one).
    Result<void> update(const Story& story);
    // Deletes the story, its passages and their states.
    Result<void> remove(int64_t id);

    // Adds a passage under parentId (0 = a new root) and, when makeCurrent, makes it
    // the current leaf; generationId (0 = none) marks a model generation's text.
    // Returns the new passage's id.
    Result<int64_t> addPassage(int64_t storyId, int64_t parentId, const std::string& text,
                               PassageAuthor author, bool makeCurrent = true,
                               int64_t generationId = 0);
    // addPassage under the current leaf, made current: "continue".
    Result<int64_t> append(int64_t storyId, const std::string& text, PassageAuthor author);
    Result<Passage> passage(int64_t id);
    // The children of parentId (0 = the roots) in creation order: the alternatives.
    Result<std::vector<Passage>> children(int64_t storyId, int64_t parentId);
    // Root-first chain ending at leafId.
    Result<std::vector<Passage>> path(int64_t leafId);
    Result<std::vector<Passage>> currentPath(int64_t storyId);
    // The concatenated text of the current path.
    Result<std::string> currentText(int64_t storyId);
    // Makes passageId (of this story; 0 = none) the current leaf.
    Result<void> setCurrent(int64_t storyId, int64_t passageId);
    // Moves the current leaf to its parent; returns the new current id (0 = empty).
    Result<int64_t> undo(int64_t storyId);
    // Replaces a passage's text in place and deletes the recurrent states of that
    // passage and of all its descendants (they were computed from the old text). The
    // passage becomes the user's edit (PassageAuthor::Edit) unless keepAuthor (a
    // model's text cut short stays the model's). With `replaced`, what the edit
    // replaces (the text, author and states, blobs included) is kept there for
    // undoEdit. Returns the number of states deleted.
    Result<int64_t> editPassage(int64_t passageId, const std::string& text, bool keepAuthor = false,
                                ReplacedPassage* replaced = nullptr);
    // Takes an edit back: the passage's text, author and edit time as they were, the
    // states made since from its text (of it and its descendants) deleted, and the
    // states the edit deleted saved again (those of passages that still exist).
    // Returns the number of states restored.
    Result<int64_t> undoEdit(const ReplacedPassage& replaced);
    // Deletes a passage and its descendants; the current leaf moves to its parent
    // when it was among them.
    Result<void> removePassage(int64_t passageId);
    // Number of passages in a story (all branches).
    Result<int64_t> passageCount(int64_t storyId);
    // Every passage of a story (all branches), parents before children (by id).
    Result<std::vector<Passage>> allPassages(int64_t storyId);
    // Copies a story under a new title: its settings, memory, author's note, the whole
    // passage tree with the same current path, and the saved states (so the copy
    // continues at once). Returns the new story's id.
    Result<int64_t> duplicate(int64_t storyId, const std::string& title);
    // Ids of the stories whose title or any passage (on any branch) contains `text`,
    // ignoring ASCII case, most recently updated first. Empty text matches all.
    Result<std::vector<int64_t>> search(const std::string& text);

private:
    Connection& m_db;
};

} // namespace baton::storage
