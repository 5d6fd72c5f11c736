package event

// index files the hub's live subscribers by what they may match, so that an
// event visits only the subscribers it may be for and the cost of dispatching
// it does not grow with the subscribers it is not for (TARGETS.md P4a: 10,000
// Prism pages each follow their own artifact). A subscriber is filed once, by
// the most selective part of its selector:
//
//   - a ref (artifactEvents, toolCallUpdates): under that unpinned ref; an
//     event visits the subscribers of its own ref, pinned or not;
//   - otherwise a list of event types without "*": under each exact type and
//     each prefix ("hypothesis." for "hypothesis.*"); an event visits those of
//     its type and of each of its type's prefixes;
//   - otherwise (no selector, no types, or "*"): in the list of subscribers
//     every event visits.
//
// Every visited subscriber is still checked in full (Sub.wants: floor,
// visibility, the whole selector), so the index only skips subscribers that
// could not have matched. All of it is guarded by the hub's mu.
type index struct {
	all      map[*Sub]struct{}
	byRef    map[string]map[*Sub]struct{}
	byType   map[string]map[*Sub]struct{}
	byPrefix map[string]map[*Sub]struct{}
	anyEvent map[*Sub]struct{}

	// stamp numbers dispatches; a subscriber filed under two keys an event
	// visits (types ["a.b", "a.*"]) is checked once, by its seen stamp.
	stamp uint64
	// visits counts the subscribers checked against an event, for tests.
	visits int64
}

func newIndex() index {
	return index{all: map[*Sub]struct{}{}, byRef: map[string]map[*Sub]struct{}{},
		byType: map[string]map[*Sub]struct{}{}, byPrefix: map[string]map[*Sub]struct{}{}, anyEvent: map[*Sub]struct{}{}}
}

func (x *index) len() int { return len(x.all) }

func (x *index) add(s *Sub) {
	if _, ok := x.all[s]; ok {
		return
	}
	x.all[s] = struct{}{}
	x.file(s, true)
}

func (x *index) remove(s *Sub) {
	if _, ok := x.all[s]; !ok {
		return
	}
	delete(x.all, s)
	x.file(s, false)
}

// file adds s under its keys, or removes it from them.
func (x *index) file(s *Sub, add bool) {
	put := func(m map[string]map[*Sub]struct{}, key string) {
		set := m[key]
		if add {
			if set == nil {
				set = map[*Sub]struct{}{}
				m[key] = set
			}
			set[s] = struct{}{}
			return
		}
		delete(set, s)
		if len(set) == 0 {
			delete(m, key) // 10,000 pages come and go: no empty sets left behind
		}
	}
	sel := s.sel
	switch {
	case sel != nil && sel.Ref != "":
		put(x.byRef, sel.Ref)
	case sel != nil && len(sel.types) > 0 && !sel.anyType():
		for _, p := range sel.types {
			if p.exact != "" {
				put(x.byType, p.exact)
			} else {
				put(x.byPrefix, p.prefix)
			}
		}
	case add:
		x.anyEvent[s] = struct{}{}
	default:
		delete(x.anyEvent, s)
	}
}

// visit calls f once for each subscriber e may be for. f may remove the
// subscriber it is given.
func (x *index) visit(e *Event, f func(*Sub)) {
	x.stamp++
	each := func(set map[*Sub]struct{}) {
		for s := range set {
			if s.seen == x.stamp {
				continue
			}
			s.seen = x.stamp
			x.visits++
			f(s)
		}
	}
	if e.Ref != nil {
		r := *e.Ref
		each(x.byRef[r])
		for i := 0; i < len(r); i++ {
			if r[i] == '@' { // refIs: a pinned ref is its artifact's too
				each(x.byRef[r[:i]])
			}
		}
	}
	each(x.byType[e.Type])
	for i := 0; i < len(e.Type); i++ {
		if e.Type[i] == '.' {
			each(x.byPrefix[e.Type[:i+1]])
		}
	}
	each(x.anyEvent)
}

// anyType reports whether the type list admits every type ("*").
func (s *Selector) anyType() bool {
	for _, p := range s.types {
		if p.any {
			return true
		}
	}
	return false
}
