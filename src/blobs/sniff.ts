/**
 * The Content-Type a blob is served with, from its leading bytes (API.md "Blobs"). Only the
 * image types an agent session carries are recognised; everything else is a byte stream.
 */

export type SniffedContentType =
  | 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp' | 'application/octet-stream'

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const JPEG = [0xff, 0xd8, 0xff]
const GIF87A = [...Buffer.from('GIF87a')]
const GIF89A = [...Buffer.from('GIF89a')]
const RIFF = [...Buffer.from('RIFF')]
const WEBP = [...Buffer.from('WEBP')]

function startsWith (bytes: Uint8Array, magic: readonly number[], offset = 0): boolean {
  if (bytes.length < offset + magic.length) return false
  return magic.every((byte, i) => bytes[offset + i] === byte)
}

/** `image/png`, `image/jpeg`, `image/gif`, `image/webp` by magic number, else `application/octet-stream`. */
export function sniffContentType (bytes: Uint8Array): SniffedContentType {
  if (startsWith(bytes, PNG)) return 'image/png'
  if (startsWith(bytes, JPEG)) return 'image/jpeg'
  if (startsWith(bytes, GIF87A) || startsWith(bytes, GIF89A)) return 'image/gif'
  // RIFF container: "RIFF", 4 bytes of size, then the form type "WEBP".
  if (startsWith(bytes, RIFF) && startsWith(bytes, WEBP, 8)) return 'image/webp'
  return 'application/octet-stream'
}
