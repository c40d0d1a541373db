import type { ActorRefFrom } from 'xstate';
import type { galleryMachine } from '../../machines/gallery';

export type GalleryRef = ActorRefFrom<typeof galleryMachine>;
