import type { CollectionModel, CollectionRegistry } from './model.js';

// Hypermedia: every resource object carries `link`, an object keyed by relation.

export interface Link {
  href: string;
  title: string;
  type: 'application/json';
}

const ID_MARK = 'GATEHOUSExIDxMARK';
const PARENT_MARK = 'GATEHOUSExPARENTxMARK';

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
    return `/${model.name}/${encodeURIComponent(id)}`;
  }

  collectionPath(model: CollectionModel, parentId: string | null): string {
    return model.parent && parentId
      ? `/${model.parent.collection}/${encodeURIComponent(parentId)}/${model.name}`
      : `/${model.name}`;
  }

  forRecord(model: CollectionModel, id: string, parentId: string | null): Record<string, Link> {
    const links: Record<string, Link> = {
      self: this.link(this.recordPath(model, id), `This ${model.title} record`),
      collection: this.link(this.collectionPath(model, parentId), `The ${model.title} collection`),
    };
    if (model.parent && parentId)
      links.parent = this.link(`/${model.parent.collection}/${encodeURIComponent(parentId)}`, `The parent ${model.parent.collection} record`);
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
    const key = `${model.name}\n${parentId === null ? '' : 'p'}\n${this.publicUrl()}`;
    let template = this.templates.get(key);
    if (!template) {
      const text = JSON.stringify(this.forRecord(model, ID_MARK, parentId === null ? null : PARENT_MARK));
      template = text.split(ID_MARK).map((part) => part.split(PARENT_MARK));
      this.templates.set(key, template);
    }
    const idText = encodeURIComponent(id);
    const parentText = parentId === null ? '' : encodeURIComponent(parentId);
    return template.map((parts) => parts.join(parentText)).join(idText);
  }

  private readonly templates = new Map<string, string[][]>();

  forCollections(): Record<string, Link> {
    const links: Record<string, Link> = { self: this.link('', `API v${this.version}`) };
    for (const m of this.collections.values()) links[m.name] = this.link(`/${m.name}`, `The ${m.title} collection`);
    links.openapi = this.link('/openapi.json', 'OpenAPI 3.1 description of this API');
    return links;
  }
}
