import { useSelector } from '@xstate/react';
import { ImageModal as SharedImageModal } from '../images/ImageModal';
import type { GenerationRef } from './types';

/** The shared image modal on the dashboard: Download, Regenerate and View All Images. */
export function ImageModal({ actor }: { actor: GenerationRef }) {
  const open = useSelector(actor, (s) => s.matches({ modal: 'open' }));
  const image = useSelector(actor, (s) => s.context.selected);
  return (
    <SharedImageModal
      image={image}
      open={open}
      onClose={() => actor.send({ type: 'IMAGE.CLOSE' })}
      onDownload={(selected) => actor.send({ type: 'DOWNLOAD', image: selected })}
      viewAll
    />
  );
}
