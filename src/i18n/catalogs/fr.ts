import type { Catalog } from '../catalog.ts'

/**
 * French (français), addressing the reader as "vous".
 * @public loaded by catalogs/index.ts with `require`, which knip does not follow
 */
export const fr: Catalog = {
  // The form page
  'page.title_error': 'Erreur\u00a0: {title}',
  'page.submit': 'Envoyer la réponse',
  'page.asked_by': 'Demande de {sender}',
  'page.answer_by': 'Merci de répondre au plus tard le {deadline}',
  'page.closes_in': 'Temps restant pour répondre\u00a0: {duration}.',
  'page.footer':
    'Votre réponse est transmise uniquement à la personne ou à l’organisme qui vous a envoyé ce lien. Ce formulaire n’accepte qu’une seule réponse.',
  'page.new_tab': '(s’ouvre dans un nouvel onglet)',
  'mark.required': '(obligatoire)',
  'mark.optional': '(facultatif)',

  // Errors, as a 422 page shows them
  'summary.title': 'Certaines réponses sont à corriger',
  'error.prefix': 'Erreur\u00a0:',
  'error.required.text': 'Saisissez une réponse',
  'error.required.textarea': 'Saisissez une réponse',
  'error.required.email': 'Saisissez une adresse e-mail',
  'error.required.number': 'Saisissez un nombre',
  'error.required.date': 'Saisissez une date',
  'error.required.select': 'Sélectionnez une option',
  'error.required.select_multiple': 'Sélectionnez au moins une option',
  'error.required.file': 'Choisissez un fichier',
  'error.unchecked': 'Cochez la case pour continuer',
  'error.too_short': {
    one: 'Saisissez au moins {count} caractère',
    many: 'Saisissez au moins {count} de caractères',
    other: 'Saisissez au moins {count} caractères',
  },
  'error.too_long': {
    one: 'Saisissez {count} caractère au maximum',
    many: 'Saisissez {count} de caractères au maximum',
    other: 'Saisissez {count} caractères au maximum',
  },
  'error.too_long_by': {
    one: '{limit}. Il y a {count} caractère en trop',
    many: '{limit}. Il y a {count} de caractères en trop',
    other: '{limit}. Il y a {count} caractères en trop',
  },
  'answered.title': 'Réponse déjà envoyée\u00a0: {title}',
  'error.too_small': 'Saisissez un nombre supérieur ou égal à {min}',
  'error.too_large': 'Saisissez un nombre inférieur ou égal à {max}',
  'error.step': 'Saisissez un nombre par pas de {step}',
  'error.step_from': 'Saisissez un nombre par pas de {step} à partir de {min}',
  'error.invalid_format': 'Saisissez la réponse au bon format',
  'error.invalid_format.text': 'Saisissez la réponse sur une seule ligne',
  'error.invalid_format.number': 'Saisissez un nombre, par exemple {example}',
  'error.pattern': 'Saisissez la réponse au format demandé',
  'error.email': 'Saisissez une adresse e-mail au bon format, par exemple nom@domaine.fr',
  'error.not_an_option': 'Sélectionnez l’une des options proposées',
  'error.not_unique': 'Sélectionnez chaque option une seule fois',
  'error.too_few_selected': {
    one: 'Sélectionnez au moins {count} option',
    many: 'Sélectionnez au moins {count} d’options',
    other: 'Sélectionnez au moins {count} options',
  },
  'error.too_many_selected': {
    one: 'Sélectionnez {count} option au maximum',
    many: 'Sélectionnez {count} d’options au maximum',
    other: 'Sélectionnez {count} options au maximum',
  },
  'error.date': 'Saisissez une date qui existe',
  'error.date_too_early': 'Choisissez une date à partir du {date}',
  'error.date_too_late': 'Choisissez une date jusqu’au {date} inclus',
  'error.file_too_large': 'Le fichier sélectionné ne doit pas dépasser {size}',
  'error.file_type': 'Le fichier sélectionné doit être de l’un de ces types\u00a0: {types}',
  'error.control_character': 'Supprimez le caractère invisible {character} de votre réponse',
  'error.invalid_encoding': 'Votre réponse n’a pas pu être lue. Saisissez-la de nouveau',
  'error.invalid_value': 'Saisissez une réponse valide',

  // Hints under a label
  'hint.min_length': {
    one: 'Au moins {count} caractère.',
    many: 'Au moins {count} de caractères.',
    other: 'Au moins {count} caractères.',
  },
  'hint.max_length': {
    one: 'Jusqu’à {count} caractère.',
    many: 'Jusqu’à {count} de caractères.',
    other: 'Jusqu’à {count} caractères.',
  },
  'hint.length_between': {
    one: 'De {min} à {count} caractère.',
    many: 'De {min} à {count} de caractères.',
    other: 'De {min} à {count} caractères.',
  },
  'hint.number_between': 'Un nombre de {min} à {max}.',
  'hint.number_min': 'Un nombre supérieur ou égal à {min}.',
  'hint.number_max': 'Un nombre inférieur ou égal à {max}.',
  'hint.date_between': 'Une date du {min} au {max}.',
  'hint.date_min': 'Une date à partir du {min}.',
  'hint.date_max': 'Une date jusqu’au {max} inclus.',
  'hint.date_on': 'Uniquement le {date}.',
  'date.day': 'Jour',
  'date.month': 'Mois',
  'date.year': 'Année',
  'date.example': 'Par exemple, {example}',
  'date.missing_day': 'La date doit comporter un jour',
  'date.missing_month': 'La date doit comporter un mois',
  'date.missing_year': 'La date doit comporter une année',
  'date.missing_day_month': 'La date doit comporter un jour et un mois',
  'date.missing_day_year': 'La date doit comporter un jour et une année',
  'date.missing_month_year': 'La date doit comporter un mois et une année',
  'date.not_real': 'Saisissez une date qui existe',
  'date.year_digits': 'L’année doit comporter 4 chiffres',
  'date.on': 'La date doit être le {date}',
  'hint.file_size': 'Taille maximale\u00a0: {size}.',
  'hint.file_types': 'Types de fichiers\u00a0: {types}. Taille maximale\u00a0: {size}.',
  'hint.select_any': 'Sélectionnez toutes les options qui conviennent.',
  'hint.select_at_least': {
    one: 'Sélectionnez au moins {count} option.',
    many: 'Sélectionnez au moins {count} d’options.',
    other: 'Sélectionnez au moins {count} options.',
  },
  'hint.select_at_most': {
    one: 'Sélectionnez {count} option au maximum.',
    many: 'Sélectionnez {count} d’options au maximum.',
    other: 'Sélectionnez {count} options au maximum.',
  },
  'hint.select_exactly': {
    one: 'Sélectionnez {count} option.',
    many: 'Sélectionnez {count} d’options.',
    other: 'Sélectionnez {count} options.',
  },
  'hint.select_between': 'Sélectionnez de {min} à {max} options.',

  // Controls
  'select.placeholder': 'Sélectionnez une option',
  'select.no_answer': 'Aucune réponse',
  'file.choose': 'Choisir un fichier',
  'file.none': 'Aucun fichier sélectionné',
  'file.kept':
    'Vous avez déjà ajouté {name} ({size}). Ce fichier sera envoyé avec votre réponse, sauf si vous le retirez ou en choisissez un autre ci-dessous.',
  'file.remove': 'Retirer ce fichier',
  'file.replace': 'Inutile de le choisir à nouveau. Pour envoyer un autre fichier à la place, choisissez-le ici.',
  'file.kind.image': 'images',
  'file.kind.audio': 'fichiers audio',
  'file.kind.video': 'vidéos',
  'file.kind.text': 'fichiers texte',

  // After sending
  'receipt.title': 'Réponse envoyée\u00a0: {title}',
  'receipt.heading': 'Votre réponse a bien été envoyée',
  'receipt.default_message': 'Merci. Vous n’avez rien d’autre à faire et pouvez fermer cette page.',
  'receipt.sent_at': 'Envoyée le {time}.',
  'receipt.what_you_sent': 'Récapitulatif de votre réponse',
  'receipt.not_answered': 'Sans réponse',
  'receipt.yes': 'Oui',
  'receipt.no': 'Non',
  'receipt.file': '{name} ({size})',
  'answered.heading': 'Ce formulaire a reçu une réponse',
  'answered.at': 'La réponse a été envoyée le {time}.',
  'answered.default_message': 'Vous n’avez rien d’autre à faire et pouvez fermer cette page.',

  // Pages for every other outcome
  'status.answered.heading': 'Ce formulaire a déjà reçu une réponse',
  'status.answered.message':
    'Un formulaire n’accepte qu’une seule réponse, et celui-ci en a déjà une. Ce que vous venez d’envoyer n’a pas été enregistré.',
  'status.cancelled.heading': 'Ce formulaire a été annulé',
  'status.cancelled.message':
    'La personne ou l’organisme qui vous l’a envoyé n’a plus besoin de réponse. Ce formulaire n’accepte donc plus de réponse.',
  'status.expired.heading': 'Ce formulaire a expiré',
  'status.expired.message':
    'Le délai pour répondre est dépassé. Ce formulaire n’accepte donc plus de réponse. Si vous souhaitez tout de même répondre, demandez un nouveau lien à la personne ou à l’organisme qui vous l’a envoyé.',
  'status.not_found.heading': 'Formulaire introuvable',
  'status.not_found.message':
    'Il n’y a aucun formulaire à cette adresse. Vérifiez que le lien est complet. Il est aussi possible que le formulaire ait été supprimé.',
  'status.cross_site.heading': 'Réponse refusée',
  'status.cross_site.message':
    'Cette réponse a été envoyée depuis un autre site web. Elle n’a donc pas été acceptée. Ouvrez le lien que vous avez reçu et répondez depuis cette page.',
  'status.rate_limited.heading': 'Trop de tentatives',
  'status.rate_limited.message':
    'Trop de réponses ont été envoyées depuis votre adresse au cours de la dernière minute. Patientez un instant, puis réessayez.',
  'status.too_large.heading': 'Envoi trop volumineux',
  'status.too_large.message':
    'Votre envoi dépasse la taille acceptée par ce formulaire. Choisissez des fichiers plus petits, puis réessayez.',
  'status.too_large.limits': 'Taille maximale du fichier pour chaque question :',
  'status.too_large.file_limit': '{label} : jusqu’à {size}',
  'status.too_slow.heading': 'L’envoi a pris trop de temps',
  'status.too_slow.message':
    'Votre réponse est arrivée trop lentement et n’a pas été enregistrée, peut-être à cause d’une mauvaise connexion. Revenez au formulaire et envoyez-la de nouveau.',
  'status.busy.heading': 'Service momentanément surchargé',
  'status.busy.message':
    'Le serveur est trop sollicité pour recevoir votre réponse en ce moment. Rien n’a été enregistré. Revenez au formulaire et envoyez-la de nouveau dans quelques instants.',
  'status.unreadable.heading': 'Réponse illisible',
  'status.unreadable.message':
    'Les données reçues n’ont pas pu être lues comme une réponse à ce formulaire. Revenez au formulaire et envoyez votre réponse depuis celui-ci.',
  'status.error.heading': 'Une erreur est survenue',
  'status.error.message': 'Votre réponse n’a peut-être pas été enregistrée. Veuillez réessayer dans quelques instants.',
  'status.retry_after': {
    one: 'Vous pourrez réessayer dans {count} seconde.',
    many: 'Vous pourrez réessayer dans {count} de secondes.',
    other: 'Vous pourrez réessayer dans {count} secondes.',
  },
  'status.back': 'Retour au formulaire',
  'sent.heading': 'Ce que vous avez envoyé',
  'sent.not_recorded': 'Rien de ce que vous avez envoyé n’a été enregistré.',
  'sent.intro': 'Voici ce que vous avez envoyé, pour que vous puissiez en garder une copie.',
  'sent.copy_label': 'Vos réponses sous forme de texte',
  'sent.copy_hint': 'Sélectionnez tout le texte de ce champ, puis copiez-le.',
  'review.title': 'Vérifiez vos réponses – {title}',
  'review.heading': 'Vérifiez vos réponses avant de les envoyer',
  'review.change': 'Modifier',
  'review.continue': 'Continuer',
  'review.send_heading': 'Envoyez maintenant votre réponse',
  'review.send_text': 'Une fois votre réponse envoyée, vous ne pourrez plus la modifier.',
  'review.lapsed':
    'Vos réponses n’ont pas été envoyées. Les réponses en attente de vérification sont conservées 1 heure, et ce délai est dépassé. Remplissez à nouveau le formulaire.',
  'review.lapsed_kept':
    'Vos réponses n’ont pas été envoyées. Les réponses en attente de vérification sont conservées 1 heure, et ce délai est dépassé. Vos réponses sont reprises ci-dessous\u00a0: ajoutez de nouveau vos fichiers éventuels, puis continuez.',
}
