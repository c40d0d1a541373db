import { Placeholder } from '../common/Placeholder';
import { i18next } from '../../i18n';

export function DashboardScreen() {
  return <Placeholder title={i18next.t('nav.dashboard')} />;
}
