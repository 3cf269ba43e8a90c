// The session list: every session of the caller's tenant, newest change first, kept current by
// GET /v1/events (created, updated, deleted), filtered by project (cwd) and by text in the
// title and first message; above it, what the tenant stores against its quotas (GET /v1/usage),
// counted again at most every few seconds while sessions change.
import { api, withQuery } from './api.js'
import { ago, h, int, perFrame, plain, replace } from './dom.js'
import { LiveStream } from './live.js'

const PAGE = 1000
const MAX_PAGES = 20
const SHOWN = 500 // rows rendered at most; the filters narrow the rest
const USAGE_EVERY_MS = 3000

/** Bytes as people read them: `12.3 MB`. */
function bytes (n) {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB']
  let i = 0
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++ }
  return `${i === 0 ? int(n) : n.toFixed(1)} ${units[i]}`
}

/** `used` and, with a quota, `of <limit> (<percent>)`. */
const against = (used, limit, show) => limit === null ? show(used) : `${show(used)} of ${show(limit)} (${Math.min(100, Math.round(used / limit * 100))} %)`

export class ListView {
  constructor (main, onUnauthorized) {
    Object.assign(this, { main, onUnauthorized })
    this.sessions = new Map()
    this.renderSoon = perFrame(() => this.#render())
    this.cwd = h('select', { id: 'cwd-filter', onChange: this.renderSoon }, h('option', { value: '' }, 'All projects'))
    this.text = h('input', { id: 'text-filter', type: 'search', placeholder: 'Title or first message', onInput: this.renderSoon })
    this.summary = h('p', { class: 'summary', 'aria-live': 'polite' })
    this.usage = h('p', { class: 'usage', id: 'usage' })
    this.list = h('ul', { class: 'session-list' })
    replace(main, h('section', { class: 'sessions' },
      h('header', { class: 'list-head' }, h('h1', {}, 'Sessions'),
        h('div', { class: 'filters' },
          h('span', { class: 'filter' }, h('label', { for: 'cwd-filter' }, 'Project'), this.cwd),
          h('span', { class: 'filter' }, h('label', { for: 'text-filter' }, 'Search'), this.text))),
      this.usage, this.summary, this.list))
    void this.#start()
  }

  async #start () {
    if (!await this.#load()) return
    const upsert = (info) => { this.sessions.set(info.id, info); this.renderSoon(); this.#usageSoon() }
    this.stream = new LiveStream('/v1/events', {}, {
      'session-created': upsert,
      'session-updated': upsert,
      'session-deleted': (info) => { this.sessions.delete(info.id); this.renderSoon(); this.#usageSoon() },
      reset: () => { void this.#load() },
    }, {
      probe: () => api('/v1/sessions?limit=1'),
      onRefused: (err) => this.#failed(err),
      // Events missed while disconnected are not replayed by every server: reload the list.
      onOpen: () => { if (this.opened === true) void this.#load(); this.opened = true },
    })
  }

  async #load () {
    const sessions = new Map()
    try {
      let cursor
      for (let pages = 0; pages < MAX_PAGES; pages++) {
        const page = await api(withQuery('/v1/sessions', { includeEmpty: true, limit: PAGE, cursor }))
        for (const info of page.sessions) sessions.set(info.id, info)
        cursor = page.nextCursor
        if (cursor === null || cursor === undefined) break
      }
    } catch (err) {
      this.#failed(err)
      return false
    }
    this.sessions = sessions
    this.#render()
    void this.#usage()
    this.main.dataset.ready = 'true'
    return true
  }

  /** Counts the usage again once the changes of the next few seconds are in. */
  #usageSoon () {
    if (this.usageTimer !== undefined) return
    this.usageTimer = setTimeout(() => { this.usageTimer = undefined; void this.#usage() }, USAGE_EVERY_MS)
  }

  async #usage () {
    let u
    try {
      u = await api('/v1/usage')
    } catch {
      replace(this.usage)
      return
    }
    replace(this.usage, h('span', { class: 'usage-label' }, 'Storage'),
      h('span', { class: 'usage-bytes' }, against(u.bytes, u.quota.bytes, bytes)),
      h('span', { class: 'usage-sessions' }, `${against(u.sessions, u.quota.sessions, int)} ${u.sessions === 1 ? 'session' : 'sessions'}`),
      h('span', { class: 'usage-blobs' }, `${int(u.blobs)} ${u.blobs === 1 ? 'blob' : 'blobs'} (${bytes(u.blobBytes)})`),
      u.retention.days === null ? null : h('span', { class: 'usage-retention' }, `kept ${int(u.retention.days)} days after their last change`))
    this.usage.dataset.full = String((u.quota.bytes !== null && u.bytes >= u.quota.bytes) || (u.quota.sessions !== null && u.sessions >= u.quota.sessions))
  }

  #failed (err) {
    if (err.status === 401) this.onUnauthorized(err.message)
    else replace(this.summary, `The sessions could not be listed: ${err.message}`)
  }

  #render () {
    const cwds = [...new Set([...this.sessions.values()].map((s) => s.cwd))].sort()
    const chosen = this.cwd.value
    replace(this.cwd, h('option', { value: '' }, 'All projects'), cwds.map((cwd) => h('option', { value: cwd, selected: cwd === chosen }, cwd)))
    const needle = this.text.value.trim().toLowerCase()
    const shown = [...this.sessions.values()]
      .filter((s) => (chosen === '' || s.cwd === chosen) &&
        (needle === '' || `${s.title ?? ''}\n${s.firstMessage ?? ''}`.toLowerCase().includes(needle)))
      .sort((a, b) => (Date.parse(b.modified) || 0) - (Date.parse(a.modified) || 0))
    replace(this.summary, `${int(shown.length)} of ${int(this.sessions.size)} sessions`,
      shown.length > SHOWN ? ` (the newest ${SHOWN} are listed; narrow the filters for the rest)` : '')
    replace(this.list, shown.slice(0, SHOWN).map((s) => h('li', { dataset: { id: s.id } },
      h('a', { href: `/ui/sessions/${encodeURIComponent(s.id)}`, dataset: { nav: '' } },
        h('span', { class: 'title' }, s.title || plain(s.firstMessage ?? '') || s.id),
        s.title && s.firstMessage ? h('span', { class: 'first' }, plain(s.firstMessage)) : null,
        h('span', { class: 'info' },
          h('span', { class: 'cwd' }, s.cwd),
          h('time', { datetime: s.modified, title: s.modified }, ago(s.modified)),
          h('span', { class: 'counts' }, `${int(s.entryCount)} entries · ${int(s.messageCount)} messages`))))))
  }

  destroy () {
    this.stream?.close()
    clearTimeout(this.usageTimer)
  }
}
