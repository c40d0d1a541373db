/** Display helpers shared by the gallery, the image modal and the download action. */

/** SPEC section 3: KB with 2 decimals, or MB once the size reaches 1024 KB. */
export function formatFileSize(bytes: number): string {
  const kilobytes = bytes / 1024;
  if (kilobytes >= 1024) return `${(kilobytes / 1024).toFixed(2)} MB`;
  return `${kilobytes.toFixed(2)} KB`;
}

/** SPEC section 7: downloads are always saved under a .jpg name, whatever the format. */
export function downloadFileName(id: number | string, fileName: string): string {
  return `imagegen_${id}_${fileName}.jpg`;
}
