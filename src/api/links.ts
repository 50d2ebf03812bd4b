import type { CollectionModel, CollectionRegistry } from '../contract/collections.js';
import { uriComponent } from '../platform/http/json-text.js';
import type { ListQuery } from './query.js';

// Hypermedia: every resource object carries `link`, an object keyed by relation.

export interface Link {
  href: string;
  title: string;
  type: 'application/json';
}

const PAGING_PARAMS = new Set(['limit', 'offset', 'page', 'per_page', 'after', 'before']);
const ID_MARK = 'GATEHOUSExIDxMARK';
const PARENT_MARK = 'GATEHOUSExPARENTxMARK';
const MARKS = new RegExp(`(${ID_MARK}|${PARENT_MARK})`);

export class Links {
  readonly api: string;
  constructor(
    private readonly publicUrl: () => string,
    private readonly version: number,
    private readonly collections: CollectionRegistry,
  ) {
    this.api = `/v${version}`;
  }

  /** The absolute URL of an API path such as `/zoos/1`. */
  url(path: string): string {
    return `${this.publicUrl()}${this.api}${path}`;
  }

  link(path: string, title: string): Link {
    return { href: this.url(path), title, type: 'application/json' };
  }

  recordPath(model: CollectionModel, id: string): string {
    return `/${model.name}/${uriComponent(id)}`;
  }

  collectionPath(model: CollectionModel, parentId: string | null): string {
    return model.parent && parentId
      ? `/${model.parent.collection}/${uriComponent(parentId)}/${model.name}`
      : `/${model.name}`;
  }

  forRecord(model: CollectionModel, id: string, parentId: string | null): Record<string, Link> {
    const links: Record<string, Link> = {
      self: this.link(this.recordPath(model, id), `This ${model.title} record`),
      collection: this.link(this.collectionPath(model, parentId), `The ${model.title} collection`),
    };
    if (model.parent && parentId)
      links.parent = this.link(`/${model.parent.collection}/${uriComponent(parentId)}`, `The parent ${model.parent.collection} record`);
    for (const child of model.children)
      links[child] = this.link(`${this.recordPath(model, id)}/${child}`, `The ${child} of this record`);
    if (model.attachments) links.attachments = this.link(`${this.recordPath(model, id)}/attachments`, 'The attachments of this record');
    return links;
  }

  /**
   * forRecord as JSON text, from a template made once per collection (and public URL) by
   * rendering forRecord with placeholder ids: the links are defined in one place only.
   */
  forRecordJson(model: CollectionModel, id: string, parentId: string | null): string {
    const { parts } = this.template(model, parentId !== null);
    const idText = uriComponent(id);
    const parentText = parentId === null ? '' : uriComponent(parentId);
    // parts alternates text and placeholders: text, mark, text, mark, …, text.
    let out = parts[0];
    for (let i = 1; i < parts.length; i += 2) out += (parts[i] === ID_MARK ? idText : parentText) + parts[i + 1];
    return out;
  }

  private readonly templates = new Map<CollectionModel, { url: string; parts: string[] }>();
  private readonly nestedTemplates = new Map<CollectionModel, { url: string; parts: string[] }>();

  private template(model: CollectionModel, nested: boolean): { url: string; parts: string[] } {
    const url = this.publicUrl();
    const cache = nested ? this.nestedTemplates : this.templates;
    let template = cache.get(model);
    if (template?.url !== url) {
      const text = JSON.stringify(this.forRecord(model, ID_MARK, nested ? PARENT_MARK : null));
      template = { url, parts: text.split(MARKS) };
      cache.set(model, template);
    }
    return template;
  }

  /**
   * RFC 8288 Link of a list page, in the terms the client paged by: `first`, `next` and `prev` —
   * `after=`/`before=` cursors when paging by keyset, offsets or page numbers otherwise. The other
   * parameters of the request (filters, sort, fields …) are kept.
   */
  paging(base: string, request: Record<string, unknown>, query: ListQuery, page: { count: number; total: number | null; next: string | null; prev: string | null }): string {
    const params = new URLSearchParams();
    for (const [k, val] of Object.entries(request)) if (!PAGING_PARAMS.has(k)) params.set(k, String(val));
    const { limit, offset, paging } = query;
    const link = (set: Record<string, string>, rel: string) => {
      const p = new URLSearchParams(params);
      for (const [k, v] of Object.entries(set)) p.set(k, v);
      return `<${base}?${p.toString()}>; rel="${rel}"`;
    };
    if (paging === 'cursor') {
      const parts = [link({ limit: String(limit) }, 'first')];
      if (page.prev !== null) parts.push(link({ limit: String(limit), before: page.prev }, 'prev'));
      if (page.next !== null) parts.push(link({ limit: String(limit), after: page.next }, 'next'));
      return parts.join(', ');
    }
    const at = (off: number, rel: string) =>
      paging === 'page' ? link({ page: String(Math.floor(off / limit) + 1), per_page: String(limit) }, rel) : link({ limit: String(limit), offset: String(off) }, rel);
    const parts = [at(0, 'first')];
    if (offset > 0) parts.push(at(Math.max(0, offset - limit), 'prev'));
    const more = page.total === null ? page.count === limit : offset + limit < page.total;
    if (more) parts.push(at(offset + limit, 'next'));
    return parts.join(', ');
  }

  forCollections(): Record<string, Link> {
    const links: Record<string, Link> = { self: this.link('', `API v${this.version}`) };
    for (const m of this.collections.values()) links[m.name] = this.link(`/${m.name}`, `The ${m.title} collection`);
    links.openapi = this.link('/openapi.json', 'OpenAPI 3.1 description of this API');
    return links;
  }
}
