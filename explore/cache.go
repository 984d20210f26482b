package explore

import (
	"container/list"
	"sync"
	"time"
)

// Cache is an LRU of loaded and indexed files with a byte budget, safe for
// concurrent use and meant to be shared by all agents of a process. An entry
// is keyed by the read root and the cleaned path, and is only served while
// the file's size and modification time still match, so a rewritten file is
// never answered from stale bytes.
type Cache struct {
	mu    sync.Mutex
	max   int64
	ll    *list.List // front = most recently used
	items map[string]*list.Element
}

type cacheEntry struct {
	key   string
	size  int64
	mtime time.Time
	doc   *doc
}

// NewCache returns a cache that keeps at most maxBytes of file contents and
// indexes. maxBytes <= 0 means nothing is kept (every call loads the file).
func NewCache(maxBytes int64) *Cache {
	return &Cache{max: maxBytes, ll: list.New(), items: map[string]*list.Element{}}
}

// get returns the cached doc for key if the file still has this size and
// modification time.
func (c *Cache) get(key string, size int64, mtime time.Time) *doc {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil
	}
	e := el.Value.(*cacheEntry)
	if e.size != size || !e.mtime.Equal(mtime) {
		c.ll.Remove(el)
		delete(c.items, key)
		return nil
	}
	c.ll.MoveToFront(el)
	c.evictLocked()
	return e.doc
}

// put stores d, evicting least recently used entries beyond the budget. A
// doc larger than the whole budget is not kept.
func (c *Cache) put(key string, size int64, mtime time.Time, d *doc) {
	if c == nil || d.memSize() > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.ll.Remove(el)
	}
	c.items[key] = c.ll.PushFront(&cacheEntry{key: key, size: size, mtime: mtime, doc: d})
	c.evictLocked()
}

// evictLocked drops entries from the back until the total fits. Sizes are
// re-read because a doc grows as containers get indexed.
func (c *Cache) evictLocked() {
	var total int64
	for el := c.ll.Front(); el != nil; el = el.Next() {
		total += el.Value.(*cacheEntry).doc.memSize()
	}
	for total > c.max && c.ll.Len() > 0 {
		el := c.ll.Back()
		e := el.Value.(*cacheEntry)
		total -= e.doc.memSize()
		c.ll.Remove(el)
		delete(c.items, e.key)
	}
}

// Len reports how many files are cached.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
