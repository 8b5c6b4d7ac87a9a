// The HPACK decoder of the raw HTTP/2 client (RFC 7541): hpack.js's static table, dynamic table and Huffman code,
// driven here without its stream wrapper, and bounded: a header block that decodes to more than MAX_HEADER_LIST
// bytes (an indexed field one byte long can name a 4 KiB table entry) stops with an error before it grows further.
import hpackModule from "hpack.js";

interface HpackEntry {
  name: string;
  value: string;
  nameSize: number;
  totalSize: number;
}
interface HpackTable {
  lookup(index: number): HpackEntry | undefined;
  add(name: string, value: string, nameSize: number, valueSize: number): void;
  updateSize(size: number): void;
}
interface HpackDecoder {
  push(chunk: Buffer): void;
  isEmpty(): boolean;
  decodeBit(): number;
  decodeInt(): number;
  decodeStr(): Buffer | number[];
}
interface Hpack {
  table: { create(options: { maxSize: number }): HpackTable };
  decoder: { create(): HpackDecoder };
  utils: { stringify(bytes: Buffer | number[]): string };
}

const hpack = hpackModule as Hpack;

/** The decoded size of a header list we accept (RFC 7540's SETTINGS_MAX_HEADER_LIST_SIZE, which we announce). */
export const MAX_HEADER_LIST = 64 * 1024;
/** The dynamic table's size: HTTP/2's default, which we never change. */
const TABLE_SIZE = 4096;

/** The fields a gRPC client reads from a header block; the rest are decoded (the table must follow) and dropped. */
export interface GrpcFields {
  status: string | undefined;
  message: string | undefined;
}

export class HpackReader {
  private readonly table = hpack.table.create({ maxSize: TABLE_SIZE });

  /** Decodes one whole header block; throws (a COMPRESSION_ERROR for the connection) on any malformed one. */
  read(block: Buffer): GrpcFields {
    const d = hpack.decoder.create();
    d.push(block);
    const out: GrpcFields = { status: undefined, message: undefined };
    let size = 0;
    while (!d.isEmpty()) {
      const field = this.field(d);
      if (field === undefined) continue;
      size += field.name.length + field.value.length + 32;
      if (size > MAX_HEADER_LIST) throw new Error(`header block decodes to more than ${MAX_HEADER_LIST} bytes`);
      if (field.name === "grpc-status") out.status = field.value;
      else if (field.name === "grpc-message") out.message = field.value;
    }
    return out;
  }

  /** One representation: a field, or undefined for a table size update. */
  private field(d: HpackDecoder): { name: string; value: string } | undefined {
    if (d.decodeBit() === 1) return this.entry(d.decodeInt());
    const incremental = d.decodeBit() === 1;
    if (!incremental && d.decodeBit() === 1) {
      this.table.updateSize(d.decodeInt());
      return undefined;
    }
    // Literal without indexing (0000) or never indexed (0001): the fourth bit says which; both read alike.
    if (!incremental) d.decodeBit();
    const index = d.decodeInt();
    const nameBytes = index === 0 ? d.decodeStr() : undefined;
    const name = nameBytes ? hpack.utils.stringify(nameBytes) : this.entry(index).name;
    const valueBytes = d.decodeStr();
    const value = hpack.utils.stringify(valueBytes);
    if (incremental)
      this.table.add(name, value, nameBytes ? nameBytes.length : Buffer.byteLength(name, "latin1"), valueBytes.length);
    return { name, value };
  }

  private entry(index: number): HpackEntry {
    const e = index === 0 ? undefined : this.table.lookup(index);
    if (e === undefined) throw new Error(`header index ${index} is in no table`);
    return e;
  }
}

/** HPACK's integer with an n-bit prefix, the prefix's other bits given (RFC 7541 5.1). */
function integer(value: number, prefixBits: number, flags: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [flags | value];
  const out = [flags | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest & 0x7f) | 0x80);
    rest >>>= 7;
  }
  out.push(rest);
  return out;
}

/** A literal string, not Huffman-coded. */
const literal = (s: string): Buffer =>
  Buffer.concat([Buffer.from(integer(Buffer.byteLength(s), 7, 0)), Buffer.from(s)]);

/**
 * The one header block every call of a connection sends: static-table names and literals never indexed into the
 * server's dynamic table, so the same bytes mean the same headers on every stream.
 */
export function unaryRequestBlock(path: string, authority: string): Buffer {
  return Buffer.concat([
    Buffer.from([0x83, 0x86]), // :method POST, :scheme http (static 3 and 6)
    Buffer.from(integer(4, 4, 0)), // :path, literal without indexing, name static 4
    literal(path),
    Buffer.from(integer(1, 4, 0)), // :authority, name static 1
    literal(authority),
    Buffer.from(integer(31, 4, 0)), // content-type, name static 31
    literal("application/grpc"),
    Buffer.from([0x00]), // te, a new name
    literal("te"),
    literal("trailers"),
  ]);
}
